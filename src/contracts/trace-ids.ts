import { createHash } from 'node:crypto';

/**
 * The ids a run's trace is made of, derived so that every process (the api that records the run,
 * each worker that runs a node of it, the one that ends it) agrees without asking anyone, and a
 * restart changes nothing: the trace id is the caller's (`traceparent`) or the run id's digest,
 * the run span's id is the run id's digest.
 */
export interface RunTrace {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** The caller's span (`traceparent`): the run span's parent. Absent: the run span is the root. */
  parentSpanId?: string;
  /** When the run was recorded (ms since the epoch): the run span's start. */
  startTimeMs: number;
}

/** A caller's trace context: only ids are taken from it, never flags or trace state. */
export interface TraceParent {
  traceId: string;
  spanId: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ALL_ZERO = /^0+$/;

/**
 * A W3C `traceparent` header, strictly: version 00, a trace id and a span id that are not all
 * zeros, lowercase hex. Anything else is hostile or broken input and is ignored (null), never an
 * error: a caller's tracing must not fail its run.
 */
export function parseTraceparent(header: unknown): TraceParent | null {
  if (typeof header !== 'string' || header.length !== 55) return null;
  const match = TRACEPARENT.exec(header);
  if (!match) return null;
  const [, traceId, spanId] = match as unknown as [string, string, string];
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId };
}

/** As stored on the run record: a traceparent the api accepted, normalised (flags dropped). */
export function formatTraceparent({ traceId, spanId }: TraceParent): string {
  return `00-${traceId}-${spanId}-01`;
}

function digestHex(kind: string, runId: string, hexDigits: number): string {
  const hex = createHash('sha256').update(`spur:${kind}:${runId}`).digest('hex').slice(0, hexDigits);
  // An all-zero id is invalid in W3C trace context; a digest that starts so is vanishingly rare.
  return ALL_ZERO.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/** The trace id of a run started without a caller's trace. */
export function runTraceId(runId: string): string {
  return digestHex('trace', runId, 32);
}

/** The run span's id: node spans name it as their parent from any process, before it is exported. */
export function runSpanId(runId: string): string {
  return digestHex('run-span', runId, 16);
}

/** A run's trace, from what its record holds (the caller's traceparent, if any, and its start). */
export function runTraceOf(runId: string, traceParent: string | null | undefined, startTime: Date): RunTrace {
  const caller = parseTraceparent(traceParent);
  return caller
    ? { traceId: caller.traceId, parentSpanId: caller.spanId, startTimeMs: startTime.getTime() }
    : { traceId: runTraceId(runId), startTimeMs: startTime.getTime() };
}
