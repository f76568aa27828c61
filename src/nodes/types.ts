import type { z } from 'zod';
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

/**
 * Where a node executes once runs exist: `pure` nodes are cheap and side-effect free (local
 * activities), `io` nodes call the network or run user code (regular activities with retries).
 */
export type NodeExecutionKind = 'pure' | 'io';

/** A node's input: predecessor title → that predecessor's output object. */
export type NodeInput = Record<string, unknown>;
export type NodeOutput = Record<string, unknown>;

/** What the engine hands to `execute` besides config and input (filled in by the run engine). */
export interface NodeExecutionContext {
  runId: string;
  nodeId: string;
  nodeTitle: string;
  signal: AbortSignal;
  /** Provider secrets and base URLs from env management, by variable name. */
  secret(name: string): Promise<string | undefined>;
  heartbeat(details?: unknown): void;
  /** Where PythonFuncNode code runs; set by workers (a node without it refuses to run code). */
  pythonSandbox?: PythonSandbox;
}

export interface NodeTypeDefinition<Config extends z.ZodObject = z.ZodObject> {
  /** The `node_type` value, e.g. `RouterNode`. */
  name: string;
  /** PySpur's display name; becomes the `title` of the config JSON Schema. */
  displayName: string;
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
  executionKind: NodeExecutionKind;
  /** Absent for node types that are catalogued but not executable yet. */
  execute?: (config: z.output<Config>, input: NodeInput, ctx: NodeExecutionContext) => Promise<NodeOutput>;
}
