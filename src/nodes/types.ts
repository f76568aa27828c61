import type { z } from 'zod';
import type { OutboundFetch } from '../outbound/outbound-fetch';
import type { PythonSandbox } from './code-execution/python-sandbox';

/** Groups of `/node/supported_types/`, in the order PySpur lists them. */
export const NODE_CATEGORIES = [
  'Input/Output',
  'AI',
  'Code Execution',
  'Logic',
  'Experimental',
  'Integrations',
  'Search',
  'Tools',
] as const;
export type NodeCategory = (typeof NODE_CATEGORIES)[number];

/** Limits of one LLM model id, published on the SingleLLMCallNode entry. */
export interface ModelConstraint {
  max_tokens: number;
  min_temperature: number;
  max_temperature: number;
  supports_JSON_output: boolean;
  supports_max_tokens: boolean;
  supports_temperature: boolean;
  supported_mime_types: string[];
  supports_reasoning: boolean;
  reasoning_separator: string | null;
  supports_thinking: boolean;
  thinking_budget_tokens: number | null;
}

/** A node's input: predecessor title → that predecessor's output object. */
export type NodeInput = Record<string, unknown>;
export type NodeOutput = Record<string, unknown>;

/** Token usage of one model request, as its reply reports it. */
export interface ModelCallUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
}

/** What the engine hands to `execute` besides config and input (filled in by the run engine). */
export interface NodeExecutionContext {
  runId: string;
  nodeId: string;
  nodeTitle: string;
  signal: AbortSignal;
  /** Provider secrets and base URLs from env management, by variable name. */
  secret(name: string): Promise<string | undefined>;
  /** The one client of the node's network requests: the installation's address policy and limits apply. */
  fetch: OutboundFetch;
  /** Records progress; the last details given are repeated by later heartbeats without any. */
  heartbeat(details?: unknown): void;
  /** Largest value the run may carry (SPUR_MAX_VALUE_BYTES): nodes that buffer output size their caps by it. */
  maxValueBytes?: number;
  /**
   * Makes one paid model request to `call.model` (a `provider/model` id) with `send`: its worst case
   * is held against the workflow's budget first (a request that would pass it throws, failing the
   * node or pausing the run at it for a person), and the usage its answer reports is priced,
   * recorded as spent and summed into the task's `usage` as it arrives, whatever then happens to
   * the node. Absent (previews, tests of a node alone): `send` is simply called.
   */
  payForModelCall?<T extends { usage?: ModelCallUsage | undefined }>(
    call: { model: string; prompt: string; maxOutputTokens: number },
    send: () => Promise<T>,
  ): Promise<T>;
  /**
   * Opens a span for one model request, where the worker traces runs (absent otherwise); `end`
   * takes the reply's usage. A request that throws is never ended here: its node's span ends it.
   */
  traceModelCall?(model: string): { end(usage?: ModelCallUsage): void };
  /** Text of an LLM reply as it streams in (live `task.delta` events; not stored with the run). */
  delta?(text: string): void;
  /** A stored file's bytes by reference (a run file or test file path), for `url_variables`. */
  readFile?(reference: string): Promise<{ bytes: Buffer; mimeType: string; name: string } | null>;
  /**
   * Stores binary content a node received (`data:<mime>;base64,…`) as a run file of the run's
   * workflow, as run inputs' files are, and answers its path (`run_files/<workflow>/<hash><ext>`,
   * downloadable at `/api/files/run_files/…`); null where the execution has no run (a preview).
   */
  storeFile?(dataUri: string): Promise<string | null>;
  /**
   * The same on every attempt of one execution, and different for every other: sent with calls a
   * server may record (MCP `_meta`), so it can tell a retried call from a new one.
   */
  callKey?: string;
  /** The last heartbeat details of an earlier attempt of this execution (a retry resumes from them). */
  heartbeatDetails?: unknown;
  /** Queries a vector index (RetrieverNode); absent where no knowledge-base store is wired. */
  retrieve?: RagRetriever;
  /** Where PythonFuncNode code runs; set by workers (a node without it refuses to run code). */
  pythonSandbox?: PythonSandbox;
  /**
   * Called by a node that knows only while it runs that it is about to act on the outside world
   * (an MCP tool not declared read-only): in a dry run, no request after it is sent. Absent
   * outside dry runs. Nodes whose config says they act declare `acts` instead.
   */
  actingFromHere?(): void;
}

/** One retrieved chunk, as RetrieverNode and `POST /rag/indices/{id}/retrieve/` return it. */
export interface RetrievedChunk {
  text: string;
  score: number;
  metadata: {
    document_id: string;
    chunk_id: string;
    document_title: string | null;
    page_number: number | null;
    chunk_number: number | null;
  };
}

export type RagRetriever = (request: {
  indexId: string;
  query: string;
  topK: number;
}) => Promise<{ results: RetrievedChunk[]; total_results: number }>;

export interface NodeTypeDefinition<Config extends z.ZodObject = z.ZodObject> {
  /** The `node_type` value, e.g. `RouterNode`. */
  name: string;
  /** PySpur's display name; becomes the `title` of the config JSON Schema. */
  displayName: string;
  /** What the node does, in a sentence; offered to models when the node is an agent's tool. */
  description?: string;
  category: NodeCategory;
  visualTag: { acronym: string; color: string };
  /** Config model with PySpur's defaults; extra keys are allowed and kept (passthrough). */
  config: Config;
  /** Static input/output models; null where PySpur publishes `{}`. */
  input: z.ZodType | null;
  output: z.ZodType | null;
  /** Only on integration nodes. */
  logo?: string;
  /** The class's own category label (`Slack`, `GitHub`, …), only where PySpur has one. */
  categoryLabel?: string;
  /** Only on SingleLLMCallNode. */
  modelConstraints?: Record<string, ModelConstraint>;
  /**
   * Config fields a model may set when the node is an agent's tool (default none): the call's
   * arguments are the tool's input, and only these of them replace stored config values for that
   * call. Never code, templates, URLs, credentials, recipients or targets of a write, limits,
   * timeouts, models or retry settings: model output is untrusted.
   */
  modelSettable?: readonly string[];
  /**
   * Whether the node, so configured, acts on the outside world (posts, sends, writes): in a dry run
   * (an eval) it then sends nothing and hands on a stub of its output. Absent: it only reads.
   */
  acts?: (config: z.output<Config>) => boolean;
  /** Absent for node types that are catalogued but not executable yet. */
  execute?: (config: z.output<Config>, input: NodeInput, ctx: NodeExecutionContext) => Promise<NodeOutput>;
}
