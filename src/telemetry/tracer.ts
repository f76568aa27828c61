import type { OtlpTraceSettings } from '../config/otlp-settings';

export type SpanAttributes = Record<string, string | number | boolean>;

/** How a span ended: `error` carries the message shown as its status. */
export type SpanOutcome = { status: 'ok' } | { status: 'error'; message: string } | { status: 'unset' };

export interface SpurSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** A child span, started now. */
  child(name: string, attributes: SpanAttributes): SpurSpan;
  end(outcome: SpanOutcome, endTimeMs?: number): void;
}

export interface SpanStart {
  name: string;
  traceId: string;
  /** A span of another process (or the run span, exported at the run's end). Absent: a root span. */
  parentSpanId?: string;
  /** The span's own id, when it must be one every process can name (the run span's). */
  spanId?: string;
  startTimeMs?: number;
  attributes: SpanAttributes;
}

/**
 * A worker's tracer: spans whose ids the caller may set, exported in batches over OTLP. No
 * OpenTelemetry type crosses this interface, so nothing but otel-sdk.ts loads the SDK.
 */
export interface SpurTracer {
  start(span: SpanStart): SpurSpan;
  /** Exports what is queued and stops (a worker's shutdown). */
  shutdown(): Promise<void>;
}

/**
 * The tracer for these settings, or null when tracing is off: then the SDK's modules are never
 * loaded (a lazy require, as the LLM adapters do), and tracing costs nothing.
 */
export function createTracer(settings: OtlpTraceSettings | null): SpurTracer | null {
  if (!settings) return null;
  const sdk = require('./otel-sdk.js') as typeof import('./otel-sdk.js');
  return sdk.createOtelTracer(settings);
}
