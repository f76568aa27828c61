/**
 * Dry runs: evals, comparisons and partial runs execute a workflow without acting on the outside
 * world. A node that would post, send or write records what it would have sent and hands on a
 * stub of its output instead (temporal/activities/dry-run-guard.ts); reads run as usual.
 * Workflow-safe: no I/O, no node registry.
 */

export const DRY_RUN_PAUSES = ['approve', 'decline'] as const;
export type DryRunPauses = (typeof DRY_RUN_PAUSES)[number];

/** How a run is dry: set on the run's input, inherited by its child runs. */
export interface DryRun {
  /** How a human pause resolves with no person asked. */
  pauses: DryRunPauses;
  /** Node types that act for real all the same (declared safe to run in evals). */
  liveNodeTypes?: string[];
  /** On a batch of a suite made from runs: the dataset column naming each row's run. */
  recordedRunColumn?: string;
  /** On one row's run: a node that would act hands on the output this run recorded for it. */
  recordedRunId?: string;
}

/** The request a node would have sent: its first acting one, credentials redacted. */
export interface DryRunRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body as text, cut at DRY_RUN_BODY_BYTES (null: none). */
  body: string | null;
  body_truncated: boolean;
}

/** On a task: the node did not act. `request` is null for a node that sends nothing itself (a callback wait). */
export interface TaskDryRun {
  request: DryRunRequest | null;
  /** The run whose recorded output the node handed on (a suite made from runs); absent: a stub. */
  output_from_run?: string;
}

export const DRY_RUN_BODY_BYTES = 64 * 1024;

/** Whether a node of this type acts for real in this dry run. */
export function actsForReal(dryRun: DryRun, nodeType: string): boolean {
  return dryRun.liveNodeTypes?.includes(nodeType) === true;
}

const MAX_DEPTH = 12;

/**
 * The smallest value of a JSON Schema: a default or constant where it gives one, else the first of
 * an enum or union, empty strings and arrays, zeros, false, and objects with every listed property.
 * Nodes downstream of a stub then find the fields they read.
 */
export function stubOfJsonSchema(schema: unknown, depth = 0): unknown {
  if (schema === null || typeof schema !== 'object' || depth > MAX_DEPTH) return null;
  const s = schema as Record<string, unknown>;
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return stubOfJsonSchema(options[0], depth + 1);
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'null':
      return null;
    case 'object':
    case undefined: {
      const properties = s.properties;
      if (properties === null || typeof properties !== 'object') return type === 'object' ? {} : null;
      return Object.fromEntries(
        Object.entries(properties as Record<string, unknown>).map(([k, v]) => [k, stubOfJsonSchema(v, depth + 1)]),
      );
    }
    default:
      return null;
  }
}

/** A stub node output: the schema's stub where it is an object, else `{}`. */
export function stubOutput(schema: unknown): Record<string, unknown> {
  const stub = stubOfJsonSchema(schema);
  return stub !== null && typeof stub === 'object' && !Array.isArray(stub) ? (stub as Record<string, unknown>) : {};
}

/** The stub of a node whose outputs its config defines (`output_json_schema`, a JSON text). */
export function stubOfConfiguredOutput(config: Record<string, unknown>): Record<string, unknown> {
  const text = config.output_json_schema;
  if (typeof text !== 'string') return {};
  try {
    return stubOutput(JSON.parse(text));
  } catch {
    return {};
  }
}
