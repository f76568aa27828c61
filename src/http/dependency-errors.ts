import { isGrpcServiceError } from '@temporalio/client';

/** A service the api cannot answer without. */
export type Dependency = 'MongoDB' | 'Temporal';

/** How long a client is told to wait before trying again while a dependency is down. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * Errors of the MongoDB driver and Mongoose that mean "no server to talk to" (not a bad query):
 * server selection gave up, the socket broke, the pool was cleared, Mongoose's buffer timed out.
 */
const MONGO_UNREACHABLE = new Set([
  'MongoServerSelectionError', 'MongooseServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoNotConnectedError',
  'MongoTopologyClosedError', 'MongoPoolClearedError', 'MongoExpiredSessionError', 'PoolClosedError', 'MongoWaitQueueTimeoutError',
]);

/** gRPC codes of a Temporal frontend that is down or unreachable (UNAVAILABLE, DEADLINE_EXCEEDED). */
const GRPC_UNREACHABLE = new Set([14, 4]);

/** Which dependency, if any, an error says is unreachable; looks through wrapped causes. */
export function unreachableDependency(err: unknown): Dependency | null {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: unknown }).name;
    const message = String((e as { message?: unknown }).message ?? '');
    if (typeof name === 'string' && MONGO_UNREACHABLE.has(name)) return 'MongoDB';
    if (name === 'MongooseError' && /buffering timed out/.test(message)) return 'MongoDB';
    if (isGrpcServiceError(e) && GRPC_UNREACHABLE.has(e.code)) return 'Temporal';
    // The SDK's own connection errors (a lazy connection that cannot reach the frontend).
    if (name === 'TransportError' || (name === 'ServiceError' && /connect|unavailable|deadline/i.test(message))) return 'Temporal';
  }
  return null;
}
