import type { RunCallbackInfo } from '../engine/callback-events';
import type { NodeState } from '../engine/node-inputs';
import type {
  AgentStepInput,
  AgentStepResult,
  BudgetScope,
  ExecuteNodeResult,
  GraphNode,
  NodeOutput,
  ProgressSave,
  SavedAs,
  RunDefinition,
  TaskRecord,
} from '../engine/run-contract';
import type { RunStatus } from '../engine/statuses';
import type { PureRegion, PureRegionInput, RegionOutcome } from '../engine/pure-region';
import type { RunTrace } from './trace-ids';
import type { DryRun } from '../engine/dry-run';
import type { CarriedEnd } from '../engine/carried-end';
import type { HeldSlots, SlotsReturned } from './limit-contract';

// The contracts of the run workflows: their inputs and results, and the activities they call by
// name. The engine's own shapes (definitions, tasks, node results) stay in src/engine.

/** Input of the `spurRun` workflow: ids and the definition snapshot, never large data. */
export interface SpurRunInput {
  runId: string;
  workflowId: string;
  definition: RunDefinition;
  /** The InputNode's input, already resolved from `initial_inputs` (by id, else by title). */
  inputNodeInput: Record<string, unknown>;
  /** Task ids (`T<n>`) reserved by the api, by top-level node id. */
  taskIds: Record<string, string>;
  /** Continue as new once the history has this many events (Temporal may suggest it earlier). */
  historyEventsLimit?: number;
  /** Set when a run continues as new: where the previous execution left off. */
  resume?: RunResume;
  /** A chatbot run in a session: its turn is appended to the session when the run completes. */
  chat?: ChatTurnStart;
  /** The run's callback: its events only (its url and secret stay on the run record). */
  callback?: RunCallbackInfo;
  /** The installation's workflow-id prefix: the run's approval deliveries are named behind it (absent: none). */
  workflowIdPrefix?: string;
  /** Set when the run repeats an ended run from one node (`POST /run/{id}/rerun/`). */
  rerun?: RunRerun;
  /** The run's trace ids (src/contracts/trace-ids.ts): its node activities export spans under them. */
  trace?: RunTrace;
  /** Set in an eval's rows and their child runs: nothing acts on the outside world (src/engine/dry-run.ts). */
  dryRun?: DryRun;
  /**
   * The run's SpurRunStatus as its start set it (absent: PENDING). The launcher lists a run RUNNING
   * from its start: Temporal's listing does not tell a run no worker has picked up from one that runs.
   */
  listedAs?: RunStatus;
  /** How the run's record labels it (its ledger key, its start): its saves need not read them back. */
  recordedAs?: { apiKey: string; startTime: string };
  /**
   * Set on every run started since a node's activity runs the pure nodes right after it
   * (followUpRegion) and a short call's carries the save that shows it RUNNING (RunKeeper.carry): a
   * history recorded without it replays with those as local activities of their own, as they ran.
   */
  callsCarry?: true;
  /**
   * Set on every run started since a save refused for good stops the run (RunKeeper.stopped): no
   * node starts after it and those in flight are cancelled. A history recorded without it replays
   * with the nodes and saves that followed such a refusal, as they ran.
   */
  stopsWhenRefused?: true;
  /**
   * Set on every run started since a PythonFuncNode with a short timeout runs as a local activity
   * (activity-options.ts, shortCallOptions) like a short model call: a history recorded without it
   * replays with its Python nodes as regular activities, as they ran.
   */
  localPython?: true;
  /**
   * Set on every run started since a short call that leaves nothing of its run to do writes the
   * run's final save itself (ExecuteNodeInput.end): a history recorded without it replays with that
   * save as a local activity of its own, as it ran.
   */
  endsCarried?: true;
  /**
   * Set on every run started since a model call run as a regular activity (its timeout over the
   * short-call bound) carries what a short call does when the run's tasks are small (RunKeeper.carry,
   * REGULAR_CARRY_MAX_CHARS) and looks for a fleet-wide limit itself (ExecuteNodeInput.unlimitedOnly):
   * a history recorded without it replays with its saves and its slot request as local activities.
   */
  regularCallsCarry?: true;
}

/**
 * A rerun: the nodes not downstream of `fromNodeId` are preset with the original run's outcomes
 * (never executed) and show their original tasks, marked `reused`; the rest runs as usual.
 */
export interface RunRerun {
  fromNodeId: string;
  /** The reused tasks; the walker's preset outcomes are derived from them (`reusedStates`). */
  tasks: TaskRecord[];
  /** The start node's input, given by the client instead of what its predecessors hand it. */
  inputOverride?: Record<string, unknown>;
}

/** What the api knows of a chat turn when the run starts. */
/** A completed chat turn, appended once per run (keyed by the run id). */
export interface ChatTurnAppend {
  sessionId: string;
  userMessage: string;
  /** When the user sent the message (the run's start), ISO 8601. */
  userTime: string;
  runId: string;
  assistantMessage: string;
}

export type ChatTurnStart = Omit<ChatTurnAppend, 'runId' | 'assistantMessage'>;

/**
 * A run's state carried into its next execution (continue-as-new): the top-level nodes that have
 * ended (outputs by reference where large, so this stays small), its tasks and what it has shown.
 */
export interface RunResume {
  states: Array<[string, NodeState]>;
  tasks: TaskRecord[];
  tasksSaved: boolean;
  firstFailure: string | null;
  declined: string | null;
  shown: RunStatus;
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
  /** Where this partial run's large values are stored (deleted once the api has answered). */
  valueScope: string;
}

export interface ExecuteNodeInput {
  runId: string;
  node: GraphNode;
  input: Record<string, unknown>;
  /** Whose budget its model calls count against (absent in partial runs). */
  budget?: BudgetScope;
  /** Set in a traced run: the node's attempt is a span of its trace. */
  trace?: RunTrace;
  /** Set under a fleet-wide limit: the slots this attempt holds (limit-contract.ts). */
  slots?: HeldSlots;
  /**
   * Set on a model call that asks no limit for a slot (a short call; a regular one in runs started
   * with SpurRunInput.regularCallsCarry): it fails at once with ModelLimited, sending nothing, when
   * a fleet-wide limit applies to its model, and the run then asks for a slot.
   */
  unlimitedOnly?: true;
  /** Set in a dry run: a node that would act sends nothing and hands on a stub (dry-run-guard.ts). */
  dryRun?: DryRun;
  /**
   * A short call's run's save that shows it RUNNING, carried in the call's local activity
   * (RunKeeper.carry): written before the call, on the first attempt only.
   */
  save?: ProgressSave;
  /** A short call's follow-up (followUpRegion): run once it has answered, its node's state added. */
  followUp?: PureRegion;
  /**
   * Set when nothing of the run is left after the call and its follow-up (RunKeeper.carry): the
   * call writes the run's final save once both completed, on the first attempt only. `ended`: in a
   * traced run, what the run's span needs.
   */
  end?: RunEndPlan;
}

/** What a run's last step gets to end the run with (ExecuteNodeInput.end, EndingRegionInput.end). */
export type RunEndPlan = CarriedEnd & { ended?: { workflowId: string; trace: RunTrace } };

/**
 * `saved`: what the carried save left (ExecuteNodeInput.save), when this attempt wrote it;
 * `followUp`: the follow-up's outcomes, when it ran (absent: the run runs those nodes itself);
 * `ended`: the digest of the final save it wrote (ExecuteNodeInput.end; absent: none written).
 */
export type ExecuteNodeActivity = (
  input: ExecuteNodeInput,
) => Promise<ExecuteNodeResult & SlotsReturned & { saved?: SavedAs; followUp?: RegionOutcome[]; ended?: string }>;

/** Activity type per node type, so the Temporal UI shows what each step is. */
export function nodeActivityName(nodeType: string): string {
  return `execute${nodeType}`;
}

/** An agent's model call; `trace` and `slots` as on ExecuteNodeInput. */
export type AgentStepActivity = (
  input: AgentStepInput & { trace?: RunTrace; slots?: HeldSlots },
) => Promise<AgentStepResult & SlotsReturned>;

/** A pure region's local activity input; `trace` as on ExecuteNodeInput. */
export type TracedRegionInput = PureRegionInput & { trace?: RunTrace };

/** A pure region that is all its run has left: it ends the run too when its nodes do (ExecuteNodeInput.end). */
export type EndingRegionInput = TracedRegionInput & { end: RunEndPlan };

/** An ending region's outcomes, with the digest of the final save it wrote (if it wrote one). */
export interface EndingRegionResult {
  outcomes: RegionOutcome[];
  ended?: string;
}

/** Activity type of an agent's model call. */
export const AGENT_STEP_ACTIVITY = 'agentModelCall';
