import { DRY_RUN_BODY_BYTES, type DryRunRequest, stubOfConfiguredOutput, stubOutput } from '../../src/engine/dry-run';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import { toPlainJsonSchema } from '../../src/nodes/base-config';
import { KEY_BASES } from '../../src/nodes/credential-bases';
import type { NodeTypeDefinition } from '../../src/nodes/types';

/** Thrown at a node instead of sending: whatever the node makes of it, the guard has the request. */
export class DryRunStop extends Error {
  constructor() {
    super('Not sent: a dry run does not act on the outside world');
    this.name = 'DryRunStop';
  }
}

/** Header names whose values are credentials whatever they hold. */
const CREDENTIAL_HEADER = /auth|token|key|secret|cookie|signature|session|password/i;
const REDACTED = '[redacted]';
/** Stored credentials shorter than this are not searched for (they would redact ordinary text). */
const SHORTEST_SECRET = 6;
/** Settings that are base URLs, not credentials: what a request goes to stays readable. */
const BASE_URL_SETTINGS: ReadonlySet<string> = new Set([...KEY_BASES.values()].flat());

/**
 * One node execution in a dry run. Its node's requests go through `fetch`: they are sent as usual
 * until the node acts (its type's `acts` says so from the start, or the node calls `actingFromHere`);
 * from then on the first request is recorded, with the stored credentials the node read replaced,
 * and none is sent.
 */
export function dryRunGuard(deps: { fetch: OutboundFetch; secret(name: string): Promise<string | undefined> }) {
  let acting = false;
  let captured: DryRunRequest | undefined;
  const secrets = new Set<string>();
  const fetch: OutboundFetch = async (input, init) => {
    if (!acting) return deps.fetch(input, init);
    captured ??= await describeRequest(input, init, secrets);
    throw new DryRunStop();
  };
  return {
    fetch,
    secret: async (name: string) => {
      const value = await deps.secret(name);
      if (value && value.length >= SHORTEST_SECRET && !BASE_URL_SETTINGS.has(name)) secrets.add(value);
      return value;
    },
    actingFromHere: () => {
      acting = true;
    },
    captured: () => captured,
  };
}

export type DryRunGuard = ReturnType<typeof dryRunGuard>;

/** What a node that acted hands on instead of its output: a stub of its output model. */
export function stubOfNode(type: NodeTypeDefinition, config: Record<string, unknown>): Record<string, unknown> {
  if (!type.output) return stubOfConfiguredOutput(config);
  try {
    return stubOutput(toPlainJsonSchema(type.output));
  } catch {
    return {};
  }
}

async function describeRequest(
  input: string | URL | Request,
  init: RequestInit | undefined,
  secrets: ReadonlySet<string>,
): Promise<DryRunRequest> {
  const request = new Request(input, { ...init, duplex: 'half' } as RequestInit);
  const hide = (text: string) => redact(text, secrets);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = CREDENTIAL_HEADER.test(name) ? REDACTED : hide(value);
  });
  const body = request.body ? await boundedText(request.body) : null;
  return {
    method: request.method,
    url: hide(request.url),
    headers,
    body: body === null ? null : hide(body.text),
    body_truncated: body?.truncated ?? false,
  };
}

function redact(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of secrets) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join(REDACTED);
  }
  return out;
}

/** The body's first DRY_RUN_BODY_BYTES as text; a longer body is not read to its end. */
async function boundedText(stream: ReadableStream<Uint8Array>): Promise<{ text: string; truncated: boolean }> {
  const reader = stream.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size > DRY_RUN_BODY_BYTES) {
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return { text: Buffer.concat(chunks).subarray(0, DRY_RUN_BODY_BYTES).toString('utf8'), truncated };
}
