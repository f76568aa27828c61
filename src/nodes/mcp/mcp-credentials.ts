import { NodeExecutionError } from '../errors.js';
import { normalizedBase, settingNotSet } from '../credential-bases.js';
import { MCP_CREDENTIALS, type McpCredentialVariable } from './mcp-credential-names.js';

/** One header of an MCP server: a stored credential by name, after an optional scheme (`Bearer `). */
export interface McpHeaderSpec {
  variable: McpCredentialVariable;
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

/** A path's decoded, non-empty segments; null for one that hides a separator or is not valid UTF-8. */
function segmentsOf(pathname: string): string[] | null {
  if (hidesSeparator(pathname)) return null;
  try {
    return pathname
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .filter((segment) => segment !== '');
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

/**
 * The headers of a request to `serverUrl`, credentials read from env management. A credential
 * whose base does not cover `serverUrl` fails the node naming the settings, never a value.
 */
export async function mcpHeaders(
  serverUrl: URL,
  specs: Record<string, McpHeaderSpec>,
  secret: (name: string) => Promise<string | undefined>,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const binding = MCP_CREDENTIALS.find((c) => c.variable === spec.variable);
    if (!binding) throw new NodeExecutionError(`headers.${name}: ${spec.variable} is not an MCP credential`);
    if (hidesSeparator(serverUrl.pathname))
      throw new NodeExecutionError(
        `headers.${name}: server_url's path has an encoded separator (%2F, %5C, %2E or %25); ${spec.variable} is not sent to it`,
      );
    const base = (await secret(binding.base))?.trim();
    if (!base || !isUnderBase(serverUrl, base))
      throw new NodeExecutionError(
        `headers.${name}: ${spec.variable} is sent only to the MCP server under ${binding.base}, and server_url is not under it`,
      );
    const value = (await secret(spec.variable))?.trim();
    if (!value) throw settingNotSet(spec.variable);
    headers[name] = `${spec.prefix}${value}`;
  }
  return headers;
}
