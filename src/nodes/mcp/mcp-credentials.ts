import { credentialHeaders } from '../credential-headers.js';
import { MCP_CREDENTIALS, type McpCredentialVariable } from './mcp-credential-names.js';

export { hidesSeparator, isUnderBase } from '../credential-headers.js';

/** One header of an MCP server: a stored credential by name, after an optional scheme (`Bearer `). */
export interface McpHeaderSpec {
  variable: McpCredentialVariable;
  prefix: string;
}

/**
 * The headers of a request to `serverUrl`, credentials read from env management. A credential
 * whose base does not cover `serverUrl` fails the node naming the settings, never a value.
 */
export function mcpHeaders(
  serverUrl: URL,
  specs: Record<string, McpHeaderSpec>,
  secret: (name: string) => Promise<string | undefined>,
): Promise<Record<string, string>> {
  return credentialHeaders(serverUrl, specs, MCP_CREDENTIALS, secret, {
    urlField: 'server_url',
    destination: 'the MCP server',
  });
}
