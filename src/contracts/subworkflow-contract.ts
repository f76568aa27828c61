import type { GraphNode } from '../engine/run-contract';
import type { ChildRunStart } from './schedule-contract';

/** What a run's SubworkflowNode asks its recording activity for. */
export interface RecordSubworkflowRunInput {
  parentRunId: string;
  node: GraphNode;
  input: Record<string, unknown>;
}

/** How the parent goes on: start the child run's workflow as its child (and take `outputNodeId`'s output), or fail the node. */
export type SubworkflowPlan = (ChildRunStart & { outputNodeId: string | null }) | { kind: 'refused'; reason: string };

export const RECORD_SUBWORKFLOW_RUN_ACTIVITY = 'recordSubworkflowRun';
export type RecordSubworkflowRunActivity = (input: RecordSubworkflowRunInput) => Promise<SubworkflowPlan>;
