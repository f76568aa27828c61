import type { PauseAction, RunStatus, TaskStatus } from './statuses';
import type { PauseDecision } from './approvals';
import type { TaskDryRun } from './dry-run';

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

/**
 * Why a running node waits: its model call for a limit's slot, or for the limit's breaker to close;
 * a SubworkflowNode for its child run; a WaitNode for its timer; a WaitForCallbackNode for its callback.
 */
export const WAIT_REASONS = ['limit', 'breaker_open', 'subworkflow', 'timer', 'callback'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

/**
 * A task as the run's projection stores it (one document per run holds them all; the run's
 * workflow is its only writer).
 */
export interface TaskRecord {
  id: string;
  node_id: string;
  status: TaskStatus;
  inputs: Record<string, unknown> | null;
  outputs: NodeOutput | null;
  error: string | null;
  start_time: string | null;
  end_time: string | null;
  subworkflow_output: Record<string, unknown[]> | null;
  /** LLM tokens the node used (absent for nodes that call no model). */
  usage?: TokenUsage;
  /** A rerun's task whose outcome was taken over from the original run (not executed again). */
  reused?: boolean;
  /** The fleet-wide limit (its key) the node is waiting for a slot of, while it waits. */
  waiting_for?: string | null;
  /** Why it waits: for a slot, or for the limit's open breaker (absent: a slot). */
  waiting_reason?: WaitReason | null;
  /** A timer's wake-up time, or a callback's deadline (ISO), while the node waits for one. */
  waiting_until?: string | null;
  /** How long the node waited for limit slots, in all. */
  waited_ms?: number;
  /** The model whose answer the node's output is (`llm_info.model` or a fallback). */
  model?: string;
  /** Models that failed for good before `model` answered, in the order tried. */
  model_failures?: ModelFailure[];
  /** Set in a dry run on a node that would have acted: it sent nothing (src/engine/dry-run.ts). */
  dry_run?: TaskDryRun;
}

/** One change to a task, applied in the workflow's memory and saved with the next flush. */
export interface TaskWrite {
  nodeId: string;
  status: TaskStatus;
  inputs?: Record<string, unknown> | null;
  outputs?: NodeOutput | null;
  error?: string | null;
  startTime?: string | null;
  endTime?: string | null;
  subworkflowOutput?: Record<string, unknown[]> | null;
  usage?: TokenUsage;
  waitingFor?: string | null;
  waitingReason?: WaitReason | null;
  waitingUntil?: string | null;
  /** Added to the task's waited time. */
  addWaitedMs?: number;
  model?: string;
  modelFailures?: ModelFailure[];
  dryRun?: TaskDryRun;
}

/** A model that failed for good before another of the node's models answered. */
export interface ModelFailure {
  model: string;
  error: string;
}

/** The workflow whose budget a node's model calls are checked against. */
export interface BudgetScope {
  workflowId: string;
  /** A person approved this execution passing the budget (APPROVE on the budget's pause). */
  overBudget?: boolean;
}

/** Tokens LLM requests used (summed over a task's requests, or a run's tasks). */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The same, per model, with what it cost (absent where no model call was priced). */
  models?: ModelUsage[];
}

/**
 * One model's share of a usage. Cost in nano-USD, priced per request when it was made:
 * integers add up exactly in any order. Null when the model has no known price.
 */
export interface ModelUsage {
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  cost_nano_usd: number | null;
}

/** Two per-model usages as one: tokens and calls add; a cost stays unknown once either is. */
export function addModelUsage(a: readonly ModelUsage[], b: readonly ModelUsage[]): ModelUsage[] {
  const byModel = new Map(a.map((m) => [m.model, { ...m }]));
  for (const m of b) {
    const had = byModel.get(m.model);
    byModel.set(
      m.model,
      had
        ? {
            model: m.model,
            prompt_tokens: had.prompt_tokens + m.prompt_tokens,
            completion_tokens: had.completion_tokens + m.completion_tokens,
            calls: had.calls + m.calls,
            cost_nano_usd:
              had.cost_nano_usd === null || m.cost_nano_usd === null ? null : had.cost_nano_usd + m.cost_nano_usd,
          }
        : { ...m },
    );
  }
  return [...byModel.values()];
}

export interface ExecuteNodeResult {
  output: NodeOutput;
  startTime: string;
  endTime: string;
  /** Only for nodes that called an LLM. */
  usage?: TokenUsage;
  /** Set in a dry run on a node that would have acted: what it would have sent. */
  dryRun?: TaskDryRun;
  /**
   * The node ran as a local activity and was stopped on its run's cancel mark
   * (temporal/activities/run-cancel-watch.ts): no outcome; the workflow waits for the cancel.
   */
  stoppedForCancel?: true;
}

export function addUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
  if (!a) return b;
  if (!b) return a;
  const models = a.models || b.models ? { models: addModelUsage(a.models ?? [], b.models ?? []) } : {};
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    ...models,
  };
}

/** Fields of the run document a save may set. */
export interface RunPatch {
  status: RunStatus;
  message: string | null;
  /**
   * Set when the run ends. `outputsById`: the blocking answer (what the workflow returns), for a
   * process that answers from the saved record (run-outcomes.ts); absent when the run was cancelled.
   */
  final?: { outputsByTitle: Record<string, NodeOutput> | null; outputsById?: Record<string, NodeOutput> };
}

export interface ProgressSave {
  runId: string;
  tasks?: { records: TaskRecord[] };
  run?: RunPatch;
  /**
   * The run's record as the workflow's last save left it, when the workflow knows it and has not
   * ended the run: the save then writes on that head without reading the run first (run-projection.ts).
   */
  known?: KnownRecord;
}

/** What a save answers the workflow with, for its next save (null: unknown, the next save reads). */
export type SavedAs = Pick<KnownRecord, 'head' | 'tasks'> | null;

/** What a save would otherwise read of the run: its stream's head, and what its ledger and metrics label it with. */
export interface KnownRecord {
  /** The head text (`event_head`) the last save left; null: the run was never saved. */
  head: string | null;
  /** The version of the run's tasks document the last save wrote; null: unknown (or none written). */
  tasks: number | null;
  workflowId: string;
  /** The ledger's `api_key` of the run (usage-ledger.ts, apiKeyLabel). */
  apiKey: string;
  /** The run's `start_time`, ISO 8601. */
  startTime: string;
}

export interface PauseRecord {
  runId: string;
  nodeId: string;
  pauseId: string;
  message: string;
  pauseTime: string;
  input: Record<string, unknown>;
}

export interface PauseResolution {
  pauseId: string;
  action: PauseAction;
  userId: string;
  comments: string | null;
  resumeTime: string;
  /** Every decision on the pause, the settling one last (absent in histories recorded before there were several). */
  decisions?: PauseDecision[];
}

/** A function call an agent's model asked for; `arguments` is the JSON text it wrote. */
export interface AgentToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The agent's conversation beyond its prompt: tool-calling turns and tool results. */
export type AgentTurn =
  | { role: 'assistant'; content: string; toolCalls: AgentToolCall[] }
  /** `content`: the tool's output, sent to the model as JSON (the activity resolves it), or a message such as an error. */
  | { role: 'tool'; toolCallId: string; name: string; content: NodeOutput | string };

/** One model call of an AgentNode: the prompt is rebuilt from config and input, then the turns. */
export interface AgentStepInput {
  runId: string;
  /** Whose budget the call counts against (absent in partial runs); `overBudget`: a person approved passing it. */
  budget?: BudgetScope;
  agent: GraphNode;
  tools: GraphNode[];
  input: Record<string, unknown>;
  transcript: AgentTurn[];
  iteration: number;
}

/**
 * What a model may write into one tool's call, by its node type: `settable` config fields (the
 * type's `modelSettable`) and `config`, the type's config fields, which a call may not name otherwise.
 */
export interface ToolFields {
  settable: string[];
  config: string[];
  /**
   * The node is reached only through the step's `toolRoutes` (an MCP server's tools): every
   * argument is the call's input, and its config is the stored one plus the route's.
   */
  routed?: boolean;
}

/**
 * A function name the model was offered, bound by the activity to a tool node and the config that
 * picks the function (an MCP server node and the name of one of its tools). The model chooses
 * among names; what a name means never comes from the model.
 */
export interface ToolRoute {
  nodeId: string;
  config: Record<string, unknown>;
}

/**
 * The model asked for tools, or answered (the node's output, `tool_calls` included). `toolFields`
 * (by tool node id) comes from the node types, which the activity knows and the workflow code
 * does not load.
 */
export type AgentStepResult = (
  | {
      kind: 'tool_calls';
      content: string;
      toolCalls: AgentToolCall[];
      toolFields: Record<string, ToolFields>;
      toolRoutes?: Record<string, ToolRoute>;
    }
  | { kind: 'answer'; output: NodeOutput }
) & { usage?: TokenUsage };
