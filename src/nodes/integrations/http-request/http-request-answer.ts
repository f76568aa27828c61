import { retryAfterMs } from '../../../outbound/retry-after.js';
import { NodeExecutionError, TransientNodeError } from '../../errors.js';
import type { HttpRequestOutputValue } from './http-request-config.js';
import { type Answer, shownUrl } from './http-request-send.js';

/** How much of an error answer's body its failure quotes. */
const QUOTED_BODY = 300;

/** `text` with every credential value sent replaced: a server that echoes a key does not put it in the run. */
export function withoutSecrets(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret ? out.split(secret).join('[credential]') : out), text);
}

/**
 * An answer outside 2xx and `accept_status` fails the node with its status and the start of its
 * body. 5xx and 429 are retried (the activity's policy, up to `max_retries`; a Retry-After is the
 * wait before the next try); any other status would be answered the same again.
 */
export function failureFor(answer: Answer, method: string, secrets: readonly string[]): Error {
  const quoted = withoutSecrets(answer.text.slice(0, QUOTED_BODY), secrets).trim();
  const message = `HTTP ${answer.status} from ${method} ${shownUrl(answer.url)}: ${quoted || '(empty body)'}`;
  if (answer.status >= 500 || answer.status === 429)
    return new TransientNodeError(message, retryAfterMs(answer.headers));
  return new NodeExecutionError(message);
}

function isJsonType(contentType: string | null): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

function parsedJson(text: string, response: 'auto' | 'json' | 'text', contentType: string | null): unknown {
  if (response === 'text' || (response === 'auto' && !isJsonType(contentType))) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (response === 'auto') return null;
    throw new NodeExecutionError(
      `response is "json" but the answer is not JSON (content-type ${contentType ?? 'none'}): ${text.slice(0, QUOTED_BODY)}`,
    );
  }
}

/** The node's output: `json` per `response` (auto: when the content type says JSON), credentials taken out. */
export function outputOf(
  answer: Answer,
  response: 'auto' | 'json' | 'text',
  secrets: readonly string[],
): HttpRequestOutputValue {
  const text = withoutSecrets(answer.text, secrets);
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = withoutSecrets(value, secrets)));
  return {
    status: answer.status,
    headers,
    body: text,
    json: parsedJson(text, response, answer.headers.get('content-type')),
  };
}
