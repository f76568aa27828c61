import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { outboundStop } from '../../outbound/errors.js';
import { NodeExecutionError, TransientNodeError } from '../errors.js';

const MAX_MESSAGE = 500;

const UNSUPPORTED_VERSION = /^Server's protocol version is not supported/;

const clip = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);

/** Retrying helps only where the server may answer differently: 5xx, 429, a dropped connection. */
const RETRYABLE_STATUS = (status: number | undefined) => status === undefined || status >= 500 || status === 429;

/**
 * Maps what an MCP exchange threw onto the node error contract. Not retried: the outbound
 * policy's refusal, a server's JSON-RPC error (unknown tool, invalid arguments: the same request
 * gets the same answer), a protocol version the SDK does not speak and HTTP 4xx. Retried with the node's policy: a refused or dropped
 * connection, 5xx, 429 and a request the server never answered. Errors already in the contract
 * (a tool's error result) pass through.
 */
export function mcpFailure(url: URL, err: unknown): Error {
  if (err instanceof NodeExecutionError || err instanceof TransientNodeError) return err;
  const server = `MCP server ${url.origin}`;
  const stop = outboundStop(err);
  if (stop) return new NodeExecutionError(`${server}: request stopped by the outbound policy: ${stop.message}`);
  if (err instanceof McpError) {
    const message = `${server}: ${clip(err.message)}`;
    return err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout
      ? new TransientNodeError(message, undefined, { cause: err })
      : new NodeExecutionError(message, { cause: err });
  }
  if (err instanceof StreamableHTTPError || err instanceof SseError) {
    const message = `${server} answered ${err.code ?? 'with an error'}: ${clip(err.message)}`;
    return RETRYABLE_STATUS(err.code)
      ? new TransientNodeError(message, undefined, { cause: err })
      : new NodeExecutionError(message, { cause: err });
  }
  // The SDK says so in a plain Error; the server will answer the same version however often it is asked.
  if (err instanceof Error && UNSUPPORTED_VERSION.test(err.message))
    return new NodeExecutionError(`${server}: ${clip(err.message)}`, { cause: err });
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new TransientNodeError(`${server}: request failed: ${clip(detail)}`, undefined, { cause: err });
}
