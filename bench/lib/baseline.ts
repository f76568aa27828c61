// The floor an engine run is compared with: the same graph executed in this process, without
// Temporal. "compute" calls the node `execute` functions in topological order (config parsed as
// the activity does). "compute + mongo" also does a run's MongoDB traffic with the project's own
// code: the api's (load the workflow, pin the version, insert the run) and the projection saves
// the run's workflow makes (RunKeeper: one save before each slow node, one at the end).
import { insertWithNewId, taskIdFor } from '../../src/db/ids';
import { fromJsonText } from '../../src/db/json-text';
import type { Models, WorkflowDoc } from '../../src/db/models';
import { createRunProjection } from '../../src/db/runs/run-projection';
import { createRunEvents } from '../../src/db/runs/run-events';
import { runDocument } from '../../src/db/runs/run-documents';
import { getNodeType } from '../../src/nodes/registry';
import type { NodeExecutionContext } from '../../src/nodes/types';
import { loadConfig } from '../../src/config/load-config';
import { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { resolveRunInputs, toRunDefinition } from '../../src/runs/inputs';
import type { WorkflowDefinition } from '../../src/definitions/definition.schema';
import { createVersionService } from '../../src/modules/workflows/versions.service';
import { createWorkflowService } from '../../src/modules/workflows/workflows.service';
import { createSubworkflowLinks } from '../../src/modules/workflows/subworkflow-links';
import { createWorkflowVersions } from '../../src/db/workflow-versions';
import { type GraphLevel, planGraph, topologicalOrder } from '../../src/engine/graph';
import { type NodeState, decideNodeInput } from '../../src/engine/node-inputs';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import type { NodeOutput, RunDefinition, TaskRecord } from '../../src/engine/run-contract';
import { createOutboundFetch } from '../../src/outbound/outbound-fetch';

/** Python runs sandboxed here too, as on the bench's worker. */
const pythonSandbox = new PythonSandbox(loadConfig(process.env).python);
const outboundFetch = createOutboundFetch(loadConfig(process.env).outbound);

function context(runId: string, nodeId: string, nodeTitle: string): NodeExecutionContext {
  return {
    runId,
    nodeId,
    nodeTitle,
    signal: new AbortController().signal,
    secret: async () => undefined,
    fetch: outboundFetch,
    heartbeat: () => undefined,
    pythonSandbox,
  };
}

export interface NodeStep {
  nodeId: string;
  kind: 'pure' | 'io' | 'input';
  input: Record<string, unknown>;
  output: NodeOutput;
}

export interface StepHooks {
  /** Before an io ("slow") node executes: the workflow saves its progress then. */
  beforeIo?(nodeId: string, input: Record<string, unknown>): Promise<void>;
  after?(step: NodeStep): void;
}

/** Executes the graph node by node in topological order; returns every node's step. */
export async function executeInProcess(
  level: GraphLevel,
  inputNodeInput: Record<string, unknown>,
  runId = 'baseline',
  hooks: StepHooks = {},
): Promise<NodeStep[]> {
  const states = new Map<string, NodeState>();
  const steps: NodeStep[] = [];
  const done = (step: NodeStep) => {
    states.set(step.nodeId, { status: 'COMPLETED', output: step.output });
    steps.push(step);
    hooks.after?.(step);
  };
  for (const id of topologicalOrder(level)) {
    const node = level.byId.get(id);
    if (!node) throw new Error(`unknown node ${id}`);
    if (node.node_type === 'InputNode') {
      done({ nodeId: id, kind: 'input', input: {}, output: inputNodeInput });
      continue;
    }
    const decision = decideNodeInput(level, id, states);
    if (decision.kind !== 'run') throw new Error(`baseline: node ${id} would not run (${decision.kind})`);
    const type = getNodeType(node.node_type);
    if (!type?.execute) throw new Error(`baseline: ${node.node_type} is not executable`);
    const config = type.config.parse(node.config ?? {});
    const kind = PURE_NODE_TYPES.has(node.node_type) ? 'pure' : 'io';
    if (kind === 'io') await hooks.beforeIo?.(id, decision.input);
    const output = await type.execute(config, decision.input, context(runId, id, node.title));
    done({ nodeId: id, kind, input: decision.input, output });
  }
  return steps;
}

export function planOf(definition: WorkflowDefinition): { def: RunDefinition; level: GraphLevel } {
  const def = toRunDefinition(definition);
  return { def, level: planGraph(def) };
}

/** One run's worth of MongoDB traffic without Temporal, in the engine's order. */
export function createMongoBaseline(models: Models) {
  const links = createSubworkflowLinks({ models, versions: createWorkflowVersions(models), maxDepth: 5 });
  const workflows = createWorkflowService(models, links);
  const versions = createVersionService(models);
  const projection = createRunProjection(models, createRunEvents(models));
  const idTaken = async (id: string) => (await models.Run.exists({ _id: id })) !== null;

  return async function run(
    workflowId: string,
    initialInputs: Record<string, Record<string, unknown>>,
  ): Promise<NodeStep[]> {
    // api: what recording a client's run does before its launch (src/runs/client-runs.ts)
    const workflow: WorkflowDoc = await workflows.load(workflowId);
    const { def, level } = planOf(fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition);
    const inputNodeInput = resolveRunInputs(def, initialInputs);
    const version = await versions.ensureVersion(workflow);
    const run = await insertWithNewId(models.conn, 'run', idTaken, async (id, seq) => {
      const doc = runDocument({
        id,
        seq,
        workflowId: workflow._id,
        workflowVersionId: version._id,
        runType: 'bench-baseline',
        initialInputs,
      });
      await models.Run.create(doc);
      return doc;
    });
    // workflow: tasks kept in memory, saved before each slow node and at the end
    const records = new Map<string, TaskRecord>(
      def.nodes.map((n, i) => [
        n.id,
        {
          id: taskIdFor(run.seq, i, def.nodes.length),
          node_id: n.id,
          status: 'PENDING',
          inputs: null,
          outputs: null,
          error: null,
          start_time: null,
          end_time: null,
          subworkflow_output: null,
        },
      ]),
    );
    const snapshot = () => ({ records: [...records.values()].map((r) => ({ ...r })) });
    const steps = await executeInProcess(level, inputNodeInput, run._id, {
      beforeIo: async (nodeId, inputs) => {
        Object.assign(records.get(nodeId) as TaskRecord, {
          status: 'RUNNING',
          inputs,
          start_time: new Date().toISOString(),
        });
        await projection.save({ runId: run._id, tasks: snapshot(), run: { status: 'RUNNING', message: null } });
      },
      after: (s) => {
        const now = new Date().toISOString();
        Object.assign(records.get(s.nodeId) as TaskRecord, {
          status: 'COMPLETED',
          inputs: s.input,
          outputs: s.output,
          start_time: now,
          end_time: now,
        });
      },
    });
    const byTitle = Object.fromEntries(steps.map((s) => [level.byId.get(s.nodeId)?.title ?? s.nodeId, s.output]));
    await projection.save({
      runId: run._id,
      tasks: snapshot(),
      run: { status: 'COMPLETED', message: null, final: { outputsByTitle: byTitle } },
    });
    return steps;
  };
}
