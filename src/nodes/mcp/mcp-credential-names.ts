import { numberedCredentials } from '../credential-binding.js';

/**
 * The env-management variables an MCP server's headers may carry, each with the base URL setting
 * it is bound to. Key holders choose `server_url`, but may not read stored credentials: a key is
 * sent only to a server under the base it was entered with (and reads as unset once that base
 * changes, as every provider key does), so pointing a node at another host never sends it there.
 */
const MCP = numberedCredentials('MCP');

export const MCP_CREDENTIALS = MCP.bindings;
export const MCP_CREDENTIAL_VARIABLES = MCP.variables;
export type McpCredentialVariable = (typeof MCP_CREDENTIAL_VARIABLES)[number];
export const MCP_KEY_BASES = MCP.keyBases;
