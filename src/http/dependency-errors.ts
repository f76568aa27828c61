import { isGrpcServiceError } from '@temporalio/client';
import { storageFailureKind } from '../db/failure-kinds';

/** A service the api cannot answer without. */
export type Dependency = 'MongoDB' | 'Temporal';

/** How long a client is told to wait before trying again while a dependency is down. */
export const RETRY_AFTER_SECONDS = 5;

/** gRPC codes of a Temporal frontend that is down or unreachable (UNAVAILABLE, DEADLINE_EXCEEDED). */
const GRPC_UNREACHABLE = new Set([14, 4]);

/**
 * Which dependency, if any, an error says is unreachable; looks through wrapped causes. Temporal's
 * errors are recognised first: theirs carry the socket's own words ("connect ECONNREFUSED"),
 * which MongoDB's message patterns would claim too.
 */
export function unreachableDependency(err: unknown): Dependency | null {
  if (unreachableTemporal(err)) return 'Temporal';
  return storageFailureKind(err) === 'unavailable' ? 'MongoDB' : null;
}

function unreachableTemporal(err: unknown): boolean {
  for (
    let e: unknown = err, depth = 0;
    e && typeof e === 'object' && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (isGrpcServiceError(e) && GRPC_UNREACHABLE.has(e.code)) return true;
    const name = (e as { name?: unknown }).name;
    // The SDK's own connection errors (a lazy connection that cannot reach the frontend).
    if (
      name === 'TransportError' ||
      (name === 'ServiceError' &&
        /connect|unavailable|deadline/i.test(String((e as { message?: unknown }).message ?? '')))
    )
      return true;
  }
  return false;
}
