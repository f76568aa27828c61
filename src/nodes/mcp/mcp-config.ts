import { z } from 'zod';
import { credentialHeaderSchema } from '../credential-headers.js';
import { MCP_CREDENTIAL_VARIABLES } from './mcp-credential-names.js';

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

/** Header names the transports set themselves, or that would change how the request travels. */
const RESERVED_HEADERS = new Set([
  'accept',
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

/**
 * One header: a stored credential by its env-management name, after an optional scheme word
 * (`Bearer `). There is no field for a literal value, so a secret is never written into a
 * workflow definition (where every key holder, run record and export could read it).
 */
export const McpHeader = credentialHeaderSchema(MCP_CREDENTIAL_VARIABLES);

const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,64}$/, 'a header name (letters, digits and -)')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'set by the transport itself');

/** Where an MCP server is and how a node talks to it (MCPToolNode's own config fields). */
export const mcpServerFields = {
  /** The server's endpoint: `…/mcp` for streamable HTTP, the SSE stream's URL for `sse`. */
  server_url: z.string().max(2048).default(''),
  transport: z.enum(MCP_TRANSPORTS).default('streamable-http'),
  /** The tool to call; empty on an agent's tool node: the model may use every tool the server lists. */
  tool: z.string().max(128).default(''),
  headers: z.record(HeaderName, McpHeader).default({}),
};

/** The checks made when a definition is saved (422 at the field): the same fields, by the same schema. */
export const McpServerConfig = z.looseObject(mcpServerFields);
