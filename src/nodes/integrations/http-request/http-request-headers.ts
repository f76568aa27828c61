import type { z } from 'zod';
import { type CredentialHeaderSpec, credentialHeaders, hidesSeparator, isUnderBase } from '../../credential-headers.js';
import { NodeExecutionError } from '../../errors.js';
import { renderTemplate } from '../../templates.js';
import type { NodeExecutionContext, NodeInput } from '../../types.js';
import { HTTP_CREDENTIALS } from './http-credential-names.js';
import type { httpRequestFields } from './http-request-config.js';

type HeaderConfig = z.output<(typeof httpRequestFields)['headers']>;

/** A header's rendered value must stay one header: a CR, LF or NUL from input could start another. */
const HEADER_BREAK = /[\r\n\0]/;

export interface RequestHeaders {
  /** Every header to send, credentials included. */
  all: Record<string, string>;
  /** Names of the headers that carry a stored credential (never followed outside its base). */
  credentialNames: string[];
  /** The credential values sent, so no output or error of the node repeats them. */
  secrets: string[];
  /** The base URLs those credentials are bound to: a redirect is followed only while under all of them. */
  bases: string[];
}

/**
 * Renders template headers over the input and reads credential headers for `url`; a credential
 * whose base does not cover `url` fails the node before anything is sent (credential-headers.ts).
 */
export async function requestHeaders(
  config: HeaderConfig,
  url: URL,
  input: NodeInput,
  ctx: Pick<NodeExecutionContext, 'secret'>,
): Promise<RequestHeaders> {
  const all: Record<string, string> = {};
  const specs: Record<string, CredentialHeaderSpec> = {};
  for (const [name, value] of Object.entries(config)) {
    if (typeof value !== 'string') {
      specs[name] = value;
      continue;
    }
    const rendered = await renderTemplate(value, input, `headers.${name}`);
    if (HEADER_BREAK.test(rendered))
      throw new NodeExecutionError(`headers.${name} holds a line break (CR/LF) or NUL once rendered; nothing was sent`);
    all[name] = rendered;
  }
  const credentials = await credentialHeaders(url, specs, HTTP_CREDENTIALS, ctx.secret, {
    urlField: 'url',
    destination: 'URLs',
  });
  const secrets = Object.entries(credentials).map(([name, value]) => value.slice((specs[name]?.prefix ?? '').length));
  const bases = await Promise.all(
    Object.values(specs).map(async (spec) => {
      const binding = HTTP_CREDENTIALS.find((c) => c.variable === spec.variable);
      return binding ? ((await ctx.secret(binding.base))?.trim() ?? '') : '';
    }),
  );
  return { all: { ...all, ...credentials }, credentialNames: Object.keys(credentials), secrets, bases };
}

/** Whether a redirect to `url` keeps every credential under its base (else it is not followed). */
export function keepsCredentialsHome(url: URL, headers: RequestHeaders): boolean {
  return !hidesSeparator(url.pathname) && headers.bases.every((base) => isUnderBase(url, base));
}
