import type { z } from 'zod';
import { openObject } from '../../shared-models.js';
import { renderTemplate } from '../../templates.js';
import type { NodeExecutionContext, NodeInput, NodeOutput, NodeTypeDefinition } from '../../types.js';
import { failureFor, outputOf, withoutSecrets } from './http-request-answer.js';
import { HttpRequestOutput, httpRequestConfig } from './http-request-config.js';
import { requestHeaders } from './http-request-headers.js';
import { sendRequest } from './http-request-send.js';
import { requestUrl } from './http-request-url.js';

type Config = z.output<typeof httpRequestConfig>;

const NO_BODY = new Set(['GET', 'HEAD']);

/** The body rendered; JSON text goes as application/json unless the headers name a content type. */
async function requestBody(
  cfg: Config,
  input: NodeInput,
  headers: Record<string, string>,
): Promise<string | undefined> {
  if (NO_BODY.has(cfg.method) || !cfg.body) return undefined;
  const body = await renderTemplate(cfg.body, input, 'body');
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    let json = true;
    try {
      JSON.parse(body);
    } catch {
      json = false;
    }
    headers['content-type'] = json ? 'application/json' : 'text/plain; charset=utf-8';
  }
  return body;
}

async function execute(cfg: Config, input: NodeInput, ctx: NodeExecutionContext): Promise<NodeOutput> {
  const url = await requestUrl(cfg.url, cfg.query, input);
  const headers = await requestHeaders(cfg.headers, url, input, ctx);
  const body = await requestBody(cfg, input, headers.all);
  try {
    const answer = await sendRequest(
      { method: cfg.method, url, headers, body, timeoutMs: cfg.timeout_seconds * 1000 },
      ctx,
    );
    const accepted = (answer.status >= 200 && answer.status < 300) || cfg.accept_status.includes(answer.status);
    if (!accepted) throw failureFor(answer, cfg.method, headers.secrets);
    return outputOf(answer, cfg.response, headers.secrets);
  } catch (err) {
    // No failure message repeats a credential (a server's error page may echo the request).
    if (err instanceof Error) err.message = withoutSecrets(err.message, headers.secrets);
    throw err;
  }
}

/**
 * Calls any HTTP API: url, query, header values and body are templates over the node's input;
 * credentials are named, never written (http-credential-names.ts). Every request goes through the
 * outbound client; 5xx, 429 and network errors are retried up to `max_retries`.
 */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export const httpRequestNode: NodeTypeDefinition<typeof httpRequestConfig> = {
  name: 'HTTPRequestNode',
  displayName: 'HTTP Request',
  description: 'Sends an HTTP request and outputs the status, headers and body of the answer',
  category: 'Integrations',
  visualTag: { acronym: 'HTTP', color: '#0EA5E9' },
  config: httpRequestConfig,
  input: openObject(),
  output: HttpRequestOutput,
  // Reads (GET, HEAD, OPTIONS) run in evals as usual; every other method writes.
  acts: (cfg) => !READ_METHODS.has(cfg.method),
  execute: (cfg, input, ctx) => execute(cfg, input, ctx),
};
