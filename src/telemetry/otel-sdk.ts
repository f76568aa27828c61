import { ROOT_CONTEXT, type Span, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type IdGenerator, RandomIdGenerator, TracerProvider } from '@opentelemetry/sdk-trace';
import type { OtlpTraceSettings } from '../config/otlp-settings';
import type { SpanOutcome, SpanStart, SpurSpan, SpurTracer } from './tracer';

// The only file that imports the OpenTelemetry SDK: tracer.ts requires it when tracing is on.

/**
 * Random ids, except for the next span when its ids are pinned: the run span's ids are derived
 * from the run id so that node spans in other processes can name it as their parent. Spans start
 * synchronously, so a pin is taken by the very span it was set for.
 */
class PinnableIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  pinned: { traceId?: string; spanId?: string } = {};

  generateTraceId(): string {
    const id = this.pinned.traceId ?? this.random.generateTraceId();
    delete this.pinned.traceId;
    return id;
  }

  generateSpanId(): string {
    const id = this.pinned.spanId ?? this.random.generateSpanId();
    delete this.pinned.spanId;
    return id;
  }
}

/** Spans of a run are few: a short delay loses fewer of them if the process dies. */
const EXPORT_EVERY_MS = 1000;

export function createOtelTracer(settings: OtlpTraceSettings): SpurTracer {
  const ids = new PinnableIds();
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': settings.serviceName })),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: settings.url, headers: settings.headers }),
        scheduledDelayMillis: EXPORT_EVERY_MS,
      }),
    ],
  });
  const tracer = provider.getTracer('spur');

  const wrap = (span: Span): SpurSpan => ({
    setAttributes: (attributes) => void span.setAttributes(attributes),
    child: (name, attributes) => wrap(tracer.startSpan(name, { attributes }, trace.setSpan(ROOT_CONTEXT, span))),
    end: (outcome, endTimeMs) => {
      setOutcome(span, outcome);
      span.end(endTimeMs);
    },
  });

  return {
    start({ name, traceId, parentSpanId, spanId, startTimeMs, attributes }: SpanStart): SpurSpan {
      // A remote parent names the trace; a root span takes the pinned trace id instead.
      const parent = parentSpanId
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId,
            spanId: parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          })
        : ROOT_CONTEXT;
      ids.pinned = { ...(parentSpanId ? {} : { traceId }), ...(spanId ? { spanId } : {}) };
      try {
        return wrap(tracer.startSpan(name, { attributes, ...(startTimeMs ? { startTime: startTimeMs } : {}) }, parent));
      } finally {
        ids.pinned = {};
      }
    },
    shutdown: () => provider.shutdown(),
  };
}

function setOutcome(span: Span, outcome: SpanOutcome): void {
  if (outcome.status === 'ok') span.setStatus({ code: SpanStatusCode.OK });
  else if (outcome.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
}
