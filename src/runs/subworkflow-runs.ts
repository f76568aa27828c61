import type { DefinitionLimits } from '../config/settings';
import type { Models, RunDoc, WorkflowDoc, WorkflowVersionDoc } from '../db/models';
import type { RunRepository } from '../db/runs/run-repository';
import type { Values } from '../db/values';
import type { WorkflowVersions } from '../db/workflow-versions';
import { mappedInput } from '../engine/for-loop';
import type { GraphNode, RunDefinition } from '../engine/run-contract';
import { SpurError } from '../errors';
import { subworkflowConfig } from '../nodes/logic/subworkflow-node';
import { checkWithinLimits, resolveRunInputs, storedRunDefinition } from './inputs';
import type { KnownAtLaunch } from './launcher';
import type { RunRecorder } from './recorder';

export interface SubworkflowRunDeps {
  models: Models;
  recorder: RunRecorder;
  runRecords: Pick<RunRepository, 'recordOfTrigger' | 'ancestryOf'>;
  versions: Pick<WorkflowVersions, 'ensureVersion' | 'byId'>;
  values: Pick<Values, 'resolve'>;
  definitionLimits: DefinitionLimits;
}

export interface SubworkflowCall {
  parentRunId: string;
  node: GraphNode;
  input: Record<string, unknown>;
}

export type SubworkflowRecord =
  /** The child run is recorded (PENDING), or was by an earlier attempt of this recording. */
  | { kind: 'recorded'; run: RunDoc; known?: KnownAtLaunch; outputNodeId: string | null }
  /** Nothing was recorded: the reason fails the node. */
  | { kind: 'refused'; reason: string };

/** The key of a parent run's child: a retried recording finds the run it made. */
export const subworkflowKey = (parentRunId: string, nodeId: string) => `subworkflow:${parentRunId}:${nodeId}`;

const outputNodeOf = (definition: RunDefinition) =>
  definition.nodes.find((n) => n.node_type === 'OutputNode' && n.parent_id === null)?.id ?? null;

class Refusal extends Error {}

/**
 * Records the child run of a parent run's SubworkflowNode with the one recorder: a workflow of the
 * parent's workspace (the caller acts in it, so another workspace's id is simply not found), the
 * version its config names, its InputNode's fields mapped from the node's input. The chain of
 * runs above is checked again here (workflows may have changed since they were saved): a
 * workflow already on it is a cycle, and the child may be at most `subworkflowMaxDepth` deep.
 */
export function createSubworkflowRunRecorder(deps: SubworkflowRunDeps) {
  const maxDepth = deps.definitionLimits.subworkflowMaxDepth;

  async function versionOf(workflow: WorkflowDoc, pinnedId: string | null, asked: 'latest' | 'pinned') {
    if (asked === 'latest') return deps.versions.ensureVersion(workflow);
    const pinned = pinnedId ? await deps.versions.byId(pinnedId) : null;
    // A version of another workflow is never run in its place (the id is Spur's own, written at save).
    if (!pinned || pinned.workflow_id !== workflow._id)
      throw new Refusal(`the pinned version of workflow ${workflow._id} is gone: save the parent workflow again`);
    return pinned;
  }

  async function checkChain(parentRunId: string, childWorkflowId: string): Promise<void> {
    const chain = await deps.runRecords.ancestryOf(parentRunId, maxDepth + 1);
    if (chain.some((run) => run.workflow_id === childWorkflowId)) {
      const ids = [...chain].reverse().map((run) => run.workflow_id);
      throw new Refusal(
        `workflow ${childWorkflowId} would run inside itself: ${[...ids, childWorkflowId].join(' → ')}`,
      );
    }
    if (chain.length > maxDepth)
      throw new Refusal(
        `the child run would be nested ${chain.length} deep, over the limit of ${maxDepth} (SPUR_SUBWORKFLOW_MAX_DEPTH)`,
      );
  }

  async function record(call: SubworkflowCall, key: string): Promise<SubworkflowRecord> {
    const parsed = subworkflowConfig.safeParse(call.node.config);
    if (!parsed.success) throw new Refusal(`its config is invalid: ${parsed.error.issues[0]?.message ?? ''}`);
    const config = parsed.data;
    if (config.workflow_id === '') throw new Refusal('it names no workflow: set its workflow_id');
    await checkChain(call.parentRunId, config.workflow_id);
    const workflow = await deps.models.Workflow.findById(config.workflow_id).lean<WorkflowDoc>();
    if (!workflow) throw new Refusal(`workflow ${config.workflow_id} was not found`);
    const version: WorkflowVersionDoc = await versionOf(workflow, config.pinned_version_id, config.version);
    const definition = storedRunDefinition(version.definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const mapped = mappedInput({ ...call.node, config }, call.input);
    if (typeof mapped === 'string') throw new Refusal(mapped);
    const inputNode = definition.nodes.find((n) => n.node_type === 'InputNode' && n.parent_id === null);
    // The parent's large values are its own: the child stores its inputs again under its own id.
    const inputs = inputNode ? { [inputNode.id]: await deps.values.resolve(mapped) } : {};
    resolveRunInputs(definition, inputs);
    const { run } = await deps.recorder.record({
      kind: 'subworkflow',
      version: { pinned: version },
      inputs,
      parentRunId: call.parentRunId,
      trigger: { kind: 'subworkflow', id: call.parentRunId, key },
    });
    return {
      kind: 'recorded',
      run,
      known: { workflowName: version.name, definition },
      outputNodeId: outputNodeOf(definition),
    };
  }

  return async function recordSubworkflowRun(call: SubworkflowCall): Promise<SubworkflowRecord> {
    const key = subworkflowKey(call.parentRunId, call.node.id);
    const earlier = await deps.runRecords.recordOfTrigger(key);
    if (earlier) {
      const version = earlier.workflow_version_id ? await deps.versions.byId(earlier.workflow_version_id) : null;
      const outputNodeId = version ? outputNodeOf(storedRunDefinition(version.definition)) : null;
      return { kind: 'recorded', run: earlier, outputNodeId };
    }
    try {
      return await record(call, key);
    } catch (err) {
      // A client's mistake in the child (its inputs, its limits, its pause) fails the node, saying why.
      if (err instanceof Refusal || err instanceof SpurError) return { kind: 'refused', reason: err.message };
      throw err;
    }
  };
}

export type SubworkflowRunRecorder = ReturnType<typeof createSubworkflowRunRecorder>;
