import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// A real OTLP/HTTP trace receiver on loopback: it decodes the protobuf export requests the
// OpenTelemetry exporter sends (opentelemetry/proto/collector/trace/v1) with a small wire-format
// reader, keeping only the fields the tests assert on.

export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  /** Span events (an exception recorded, …): their names and attributes. */
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /** The resource's attributes (service.name, …). */
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request that reached the server, whatever its path. */
  requests: { path: string; contentType: string }[];
  /** The export requests' bodies, uncompressed: every byte the exporter sent, decoded or not. */
  bodies: Buffer[];
  /** Waits until `done` holds for the spans received so far. */
  waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type Field = { no: number; wire: number; value: bigint | Buffer };

/** Protobuf wire format: (tag, value) pairs; length-delimited values stay raw for the caller. */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: buf.subarray(at, at + len) });
      at += len;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytesOf = (f: Field | undefined): Buffer => (f && Buffer.isBuffer(f.value) ? f.value : Buffer.alloc(0));
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);
const text = (f: Field | undefined) => bytesOf(f).toString('utf8');
const hex = (f: Field | undefined) => bytesOf(f).toString('hex');

/** AnyValue: string 1, bool 2, int 3, double 4 (arrays and maps are not used by Spur). */
function anyValue(buf: Buffer): AttributeValue {
  const [f] = fields(buf);
  if (!f) return null;
  if (f.no === 1) return text(f);
  if (f.no === 2) return f.value === 1n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.value as bigint));
  if (f.no === 4) return (f.value as Buffer).readDoubleLE(0);
  return null;
}

function attributes(fs: Field[], no: number): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of all(fs, no)) {
    const pair = fields(bytesOf(kv));
    out[text(one(pair, 1))] = anyValue(bytesOf(one(pair, 2)));
  }
  return out;
}

/** ExportTraceServiceRequest → ResourceSpans (1) → ScopeSpans (2) → Span (2). */
export function decodeTraceRequest(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const resourceSpans = fields(bytesOf(rs));
    const resource = attributes(fields(bytesOf(one(resourceSpans, 1))), 1);
    for (const ss of all(resourceSpans, 2)) {
      for (const s of all(fields(bytesOf(ss)), 2)) {
        const span = fields(bytesOf(s));
        const status = fields(bytesOf(one(span, 15)));
        spans.push({
          traceId: hex(one(span, 1)),
          spanId: hex(one(span, 2)),
          parentSpanId: hex(one(span, 4)),
          name: text(one(span, 5)),
          startNs: bytesOf(one(span, 7)).readBigUInt64LE(0),
          endNs: bytesOf(one(span, 8)).readBigUInt64LE(0),
          attributes: attributes(span, 9),
          // Span.events (11): Event { time_unix_nano 1, name 2, attributes 3 }.
          events: all(span, 11).map((e) => {
            const event = fields(bytesOf(e));
            return { name: text(one(event, 2)), attributes: attributes(event, 3) };
          }),
          statusMessage: text(one(status, 2)),
          statusCode: Number((one(status, 3)?.value as bigint | undefined) ?? 0n),
          resource,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const bodies: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type'] ?? '') });
      try {
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
        bodies.push(body);
        spans.push(...decodeTraceRequest(body));
        // An empty ExportTraceServiceResponse: everything accepted.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    bodies,
    async waitFor(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(spans)) {
        if (Date.now() > deadline) throw new Error(`spans not received in time; have: ${spans.map((s) => s.name)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
