import { NodeExecutionError } from '../errors.js';
import { normalizedBase, settingNotSet } from '../credential-bases.js';
import { MCP_CREDENTIALS, type McpCredentialVariable } from './mcp-credential-names.js';

/** One header of an MCP server: a stored credential by name, after an optional scheme (`Bearer `). */
export interface McpHeaderSpec {
  variable: McpCredentialVariable;
  prefix: string;
}

/** `url` is the base or below it: same origin, and its path starts with the base's path. */
export function isUnderBase(url: URL, base: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(normalizedBase(base));
  } catch {
    return false;
  }
  if (parsed.origin !== url.origin) return false;
  const prefix = parsed.pathname.replace(/\/+$/, '');
  return url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
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
