import { type RunTrace, runSpanId } from '../contracts/trace-ids';
import type { SpanOutcome, SpurTracer } from './tracer';

/** A run (or batch) that has ended, as its final save records it. */
export interface RunEnd {
  runId: string;
  workflowId: string;
  trace: RunTrace;
  kind: 'run' | 'batch';
  status: string;
}

/**
 * The run's span, made once the run has ended, from the start its record holds to now, with the
 * id its node spans (exported as they ended, maybe by other processes) already name as parent.
 */
export function exportRunSpan(tracer: SpurTracer | undefined, end: RunEnd): void {
  if (!tracer) return;
  const span = tracer.start({
    name: `${end.kind} ${end.workflowId}`,
    traceId: end.trace.traceId,
    ...(end.trace.parentSpanId ? { parentSpanId: end.trace.parentSpanId } : {}),
    spanId: runSpanId(end.runId),
    startTimeMs: end.trace.startTimeMs,
    attributes: { 'spur.run.id': end.runId, 'spur.workflow.id': end.workflowId, 'spur.run.status': end.status },
  });
  span.end(outcomeOf(end));
}

/** The run's message is not exported: it holds its failed node's error, which may quote a prompt or a reply. */
function outcomeOf({ status }: RunEnd): SpanOutcome {
  if (status === 'COMPLETED') return { status: 'ok' };
  if (status === 'FAILED') return { status: 'error', message: 'The run failed: its message is on the run record' };
  return { status: 'unset' };
}
