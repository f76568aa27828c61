import { z } from 'zod';
import { NodeExecutionError } from './errors.js';
import { normalizedBase, settingNotSet } from './credential-bases.js';
import type { CredentialBinding } from './credential-binding.js';

/**
 * Headers that name a stored credential instead of holding one (MCPToolNode's, HTTPRequestNode's).
 * Key holders choose the URL a node calls but may not read stored credentials, so each credential
 * variable is bound to a base URL setting and sent only to URLs under it; a workflow definition
 * (readable by every key holder, copied into run records and exports) never holds the value.
 */

/** A header's credential by its env-management name, after an optional scheme word (`Bearer `). */
export function credentialHeaderSchema<V extends string>(variables: readonly [V, ...V[]]) {
  return z
    .object({
      variable: z.enum(variables),
      prefix: z
        .string()
        .regex(/^([A-Za-z][A-Za-z0-9-]{0,31} )?$/, 'a scheme word and a space (`Bearer `), or empty')
        .default(''),
    })
    .strict();
}

export interface CredentialHeaderSpec {
  variable: string;
  prefix: string;
}

/**
 * `/`, `\`, `.` and `%` percent-encoded: a server (or a proxy before it) that decodes them reads
 * another path than the one compared, so `…/tenantA/..%2FtenantB/mcp` would leave tenantA's base.
 */
const ENCODED_SEPARATOR = /%(2f|5c|2e|25)/i;

/** Whether a path hides a separator or a dot behind percent-encoding (a credential never goes there). */
export function hidesSeparator(pathname: string): boolean {
  return ENCODED_SEPARATOR.test(pathname);
}

/**
 * A path's decoded, non-empty segments; null for one that hides a separator, is not valid UTF-8,
 * or has a segment that starts with `..`: URL parsing resolves `..` itself, but Tomcat, Jetty and
 * Spring read `..;` (a path parameter after it) as `..` too, so `…/tenantA/..;/tenantB` would leave
 * tenantA's base there.
 */
function segmentsOf(pathname: string): string[] | null {
  if (hidesSeparator(pathname)) return null;
  try {
    const segments = pathname
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .filter((segment) => segment !== '');
    return segments.some((segment) => segment.startsWith('..')) ? null : segments;
  } catch {
    return null;
  }
}

/**
 * `url` is the base or below it: same origin, and its path's decoded segments start with the
 * base's. URL parsing has already resolved literal and `%2e` dot segments; a path with an encoded
 * separator is under no base.
 */
export function isUnderBase(url: URL, base: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(normalizedBase(base));
  } catch {
    return false;
  }
  if (parsed.origin !== url.origin) return false;
  const prefix = segmentsOf(parsed.pathname);
  const target = segmentsOf(url.pathname);
  if (!prefix || !target || target.length < prefix.length) return false;
  return prefix.every((segment, i) => target[i] === segment);
}

/** How failures name the URL field and what it must point at ("server_url", "the MCP server"). */
export interface CredentialTarget {
  urlField: string;
  destination: string;
}

/**
 * The credential headers of a request to `url`, values read from env management. A credential
 * whose base does not cover `url` fails the node naming the settings, never a value.
 */
export async function credentialHeaders(
  url: URL,
  specs: Record<string, CredentialHeaderSpec>,
  bindings: readonly CredentialBinding[],
  secret: (name: string) => Promise<string | undefined>,
  target: CredentialTarget,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const binding = bindings.find((c) => c.variable === spec.variable);
    if (!binding) throw new NodeExecutionError(`headers.${name}: ${spec.variable} is not a credential of this node`);
    if (hidesSeparator(url.pathname))
      throw new NodeExecutionError(
        `headers.${name}: ${target.urlField}'s path has an encoded separator (%2F, %5C, %2E or %25); ${spec.variable} is not sent to it`,
      );
    const base = (await secret(binding.base))?.trim();
    if (!base || !isUnderBase(url, base))
      throw new NodeExecutionError(
        `headers.${name}: ${spec.variable} is sent only to ${target.destination} under ${binding.base}, and ${target.urlField} is not under it`,
      );
    const value = (await secret(spec.variable))?.trim();
    if (!value) throw settingNotSet(spec.variable);
    headers[name] = `${spec.prefix}${value}`;
  }
  return headers;
}
