import { z } from 'zod';

/** Where and how a worker exports its traces (OTLP over HTTP, protobuf). */
export interface OtlpTraceSettings {
  /** The traces endpoint itself (`…/v1/traces`). */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
}

/** An optional text variable: blank (`NAME=` in an .env file) counts as unset. */
export const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));

/**
 * The standard OTEL_* variables, read the way the OpenTelemetry SDK reads them, so the config
 * stays the only reader of the environment (the test harness hands a worker its own). Tracing is
 * off, and the SDK never loaded, unless an endpoint is set.
 */
export const otlpEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(z.url().optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.pipe(z.url().optional()),
  OTEL_EXPORTER_OTLP_HEADERS: optionalText,
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optionalText,
  OTEL_SERVICE_NAME: optionalText,
};

type OtlpEnv = { [K in keyof typeof otlpEnv]?: z.output<(typeof otlpEnv)[K]> };

/**
 * The SDK's rules: the traces endpoint is used as given; the general one gets `v1/traces`
 * appended; trace headers override general ones of the same name.
 */
export function otlpTraceSettings(env: OtlpEnv): OtlpTraceSettings | null {
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (general ? `${general.endsWith('/') ? general : `${general}/`}v1/traces` : undefined);
  if (!url) return null;
  return {
    url,
    headers: { ...headerList(env.OTEL_EXPORTER_OTLP_HEADERS), ...headerList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME ?? 'spur',
  };
}

/** `key1=value1,key2=value2`, values URL-encoded (W3C baggage style, as the SDK parses it). */
function headerList(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    if (!key) continue;
    try {
      headers[key] = decodeURIComponent(value);
    } catch {
      headers[key] = value;
    }
  }
  return headers;
}
