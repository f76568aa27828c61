import { fromJsonText } from '../../db/json-text';
import type { McpPublication, McpTools } from '../../db/mcp-tools';
import type { Values } from '../../db/values';
import type { WorkflowDefinition } from '../../definitions/definition.schema';
import { BadRequestError, NotFoundError } from '../../errors';
import type { RunReader } from '../../runs/reader';
import type { ClientRuns } from '../../runs/client-runs';
import type { WorkflowService } from '../workflows/workflows.service';
import {
  inputNodeId,
  outputNodeId,
  workflowArgumentsSchema,
  workflowInputSchema,
  workflowOutputSchema,
} from './workflow-tool-schemas';

/** A published workflow as tools/list shows it. */
export interface WorkflowTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  outputSchema?: Record<string, unknown> & { type: 'object' };
}

/** What a tools/call answers: the outputs, a failure in the run's words, or where to follow a run still going. */
export type WorkflowToolResult =
  | { kind: 'done'; runId: string; outputs: Record<string, unknown> }
  | { kind: 'failed'; runId: string; message: string }
  | { kind: 'running'; runId: string; status: string };

/** A call's arguments do not fit its tool's input schema: the client's mistake (JSON-RPC invalid params), no run. */
export class InvalidToolArguments extends BadRequestError {
  constructor(message: string) {
    super(message, 'MCP_TOOL_ARGUMENTS');
  }
}

/** How often a call reports its run's progress while it waits. */
const PROGRESS_EVERY_MS = 500;

export interface WorkflowToolDeps {
  tools: McpTools;
  workflows: WorkflowService;
  clientRuns: ClientRuns;
  reader: RunReader;
  values: Values;
}

/**
 * Published workflows as MCP tools. Every tools/list reads the publications and the workflows'
 * current definitions, so publishing, renaming or editing shows at once, on every api. A call
 * starts a run (type `mcp`) with the arguments as its InputNode's input and waits for it as a
 * blocking run does (SPUR_BLOCKING_RUN_WAIT_SECONDS), reporting finished nodes as progress.
 */
export function createWorkflowTools({ tools, workflows, clientRuns, reader, values }: WorkflowToolDeps) {
  async function definitionOf(publication: McpPublication) {
    const workflow = await workflows.load(publication.workflow_id);
    return {
      workflow,
      definition: fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition,
    };
  }

  return {
    async list(): Promise<WorkflowTool[]> {
      const listed: WorkflowTool[] = [];
      for (const publication of await tools.list()) {
        const { workflow, definition } = await definitionOf(publication);
        const outputSchema = workflowOutputSchema(definition);
        listed.push({
          name: publication.tool_name,
          description: publication.description ?? (workflow.description || `Runs the workflow '${workflow.name}'`),
          inputSchema: workflowInputSchema(definition),
          ...(outputSchema ? { outputSchema } : {}),
        });
      }
      return listed;
    },

    async call(
      name: string,
      args: Record<string, unknown>,
      progress?: (done: number, total: number, message: string) => Promise<void>,
    ): Promise<WorkflowToolResult> {
      const publication = await tools.byToolName(name);
      if (!publication) throw new NotFoundError(`No published workflow is the tool '${name}'`, 'MCP_TOOL_NOT_FOUND');
      const { definition } = await definitionOf(publication);
      const checked = workflowArgumentsSchema(definition).safeParse(args);
      if (!checked.success) {
        const problems = checked.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`);
        throw new InvalidToolArguments(`Invalid arguments for tool '${name}': ${problems.join('; ')}`);
      }
      const inputId = inputNodeId(definition);
      const run = await clientRuns.recordAndLaunch('mcp', publication.workflow_id, {
        initial_inputs: inputId ? { [inputId]: args } : {},
        parent_run_id: null,
        files: null,
      });
      const watch = progress ? reportProgress(run.id, definition.nodes.length, progress) : undefined;
      try {
        const outcome = await clientRuns.awaitOutcome(run.id);
        const record = await reader.get(run.id);
        if (outcome.kind === 'still-running') return { kind: 'running', runId: run.id, status: record.status };
        if (record.status === 'FAILED')
          return { kind: 'failed', runId: run.id, message: record.message ?? `Run ${run.id} failed` };
        const outputId = outputNodeId(definition);
        const outputs = (outputId ? outcome.outputsById[outputId] : outcome.outputsById) ?? {};
        return { kind: 'done', runId: run.id, outputs: (await values.resolve(outputs)) as Record<string, unknown> };
      } finally {
        watch?.stop();
      }
    },
  };

  /** Polls the run's record and reports each newly finished node (a client that asked for progress). */
  function reportProgress(
    runId: string,
    total: number,
    progress: (done: number, total: number, message: string) => Promise<void>,
  ) {
    let reported = 0;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    // Each read is scheduled once the one before has sent its notification: a slow read (a loaded
    // database) never overlaps the next, so two notifications are always PROGRESS_EVERY_MS apart.
    const next = () => {
      if (!stopped) timer = setTimeout(() => void tick(), PROGRESS_EVERY_MS);
    };
    const tick = async () => {
      const run = await reader.get(runId).catch(() => null);
      const finished = run?.tasks.filter((t) => t.status === 'COMPLETED') ?? [];
      if (!stopped && finished.length > reported) {
        reported = finished.length;
        await progress(reported, total, `${finished.at(-1)?.node_id ?? ''} completed`).catch(() => undefined);
      }
      next();
    };
    next();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
}

export type WorkflowTools = ReturnType<typeof createWorkflowTools>;
