import type { RunStatus, TaskStatus } from './statuses';

/** The parts of a workflow definition the engine reads (a snapshot of the pinned version). */
export interface GraphNode {
  id: string;
  title: string;
  parent_id: string | null;
  node_type: string;
  config: Record<string, unknown>;
}

export interface GraphLink {
  source_id: string;
  target_id: string;
  source_handle: string | null;
  target_handle: string | null;
}

export interface RunDefinition {
  nodes: GraphNode[];
  links: GraphLink[];
}

export type NodeOutput = Record<string, unknown>;

/** Input of the `spurRun` workflow: ids and the definition snapshot, never large data. */
export interface SpurRunInput {
  runId: string;
  workflowId: string;
  definition: RunDefinition;
  /** The InputNode's input, already resolved from `initial_inputs` (by id, else by title). */
  inputNodeInput: Record<string, unknown>;
  /** Task ids (`T<n>`) reserved by the api, by top-level node id. */
  taskIds: Record<string, string>;
}

export interface SpurRunResult {
  status: RunStatus;
  /** Outputs by node **id** (the blocking-run response); title-keyed ones go on the run record. */
  outputsById: Record<string, NodeOutput>;
  message: string | null;
}

export interface PartialRunInput {
  definition: RunDefinition;
  inputNodeInput: Record<string, unknown>;
  targetNodeId: string;
  /** Outputs the client already has, by node id: used as given, never recomputed. */
  precomputed: Record<string, NodeOutput>;
}

/** One task record change, written idempotently by `_id = <runId>:<nodeId>`. */
export interface TaskWrite {
  nodeId: string;
  status: TaskStatus;
  inputs?: Record<string, unknown> | null;
  outputs?: NodeOutput | null;
  error?: string | null;
  startTime?: string | null;
  endTime?: string | null;
  subworkflowOutput?: Record<string, unknown[]> | null;
}

export interface ExecuteNodeInput {
  runId: string;
  node: GraphNode;
  input: Record<string, unknown>;
  /** Top-level nodes record their task; loop children do not (PySpur gives them none). */
  recordTask: boolean;
}

export interface ExecuteNodeResult {
  output: NodeOutput;
  startTime: string;
  endTime: string;
}

export type ExecuteNodeActivity = (input: ExecuteNodeInput) => Promise<ExecuteNodeResult>;

/** Activity type per node type, so the Temporal UI shows what each step is. */
export function nodeActivityName(nodeType: string): string {
  return `execute${nodeType}`;
}
