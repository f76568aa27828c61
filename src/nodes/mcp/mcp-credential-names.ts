/**
 * The env-management variables an MCP server's headers may carry, each with the base URL setting
 * it is bound to. Key holders choose `server_url`, but may not read stored credentials: a key is
 * sent only to a server under the base it was entered with (and reads as unset once that base
 * changes, as every provider key does), so pointing a node at another host never sends it there.
 */
export const MCP_CREDENTIALS = [
  { variable: 'MCP_API_KEY', base: 'MCP_API_BASE' },
  { variable: 'MCP_API_KEY_2', base: 'MCP_API_BASE_2' },
  { variable: 'MCP_API_KEY_3', base: 'MCP_API_BASE_3' },
] as const;

export type McpCredentialVariable = (typeof MCP_CREDENTIALS)[number]['variable'];

export const MCP_CREDENTIAL_VARIABLES = MCP_CREDENTIALS.map((c) => c.variable) as [
  McpCredentialVariable,
  ...McpCredentialVariable[],
];

export const MCP_KEY_BASES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  MCP_CREDENTIALS.map((c) => [c.variable, [c.base]]),
);
