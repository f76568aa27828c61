// The api's Temporal client connection. The SDK's gRPC retry interceptor schedules each retry on a
// timer; if the connection is closed meanwhile (shutdown during a Temporal outage, a test closing
// its api), the timer's new call throws "Channel has been shut down" from inside the timer: an
// uncaught exception that kills the process. Here the retry interceptor is the SDK's own, with the
// one call it makes guarded: on a closed channel the call ends as CANCELLED and the caller's
// promise rejects instead.
import {
  InterceptingCall,
  Metadata,
  type Interceptor,
  type InterceptingListener,
  type NextCall,
  status,
} from '@grpc/grpc-js';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

type CallBelow = ConstructorParameters<typeof InterceptingCall>[0];

/** A call that never reached a channel: it reports CANCELLED as soon as it is started. */
function closedChannelCall(reason: string): InterceptingCall {
  const below: CallBelow = {
    start(_metadata: Metadata, listener?: Partial<InterceptingListener>) {
      setImmediate(() =>
        listener?.onReceiveStatus?.({ code: status.CANCELLED, details: reason, metadata: new Metadata() }),
      );
    },
    cancelWithStatus() {},
    getPeer: () => '',
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    getAuthContext: () => null,
  };
  return new InterceptingCall(below);
}

/**
 * Only retries are guarded: a first attempt on a closed channel throws to its caller at once, as
 * the SDK expects (the retry interceptor can end a call only after an attempt has answered).
 */
function guardClosedChannel(interceptor: Interceptor): Interceptor {
  return (options, nextCall: NextCall) => {
    let attempts = 0;
    return interceptor(options, (o) => {
      if (attempts++ === 0) return nextCall(o);
      try {
        return nextCall(o);
      } catch (err) {
        return closedChannelCall(err instanceof Error ? err.message : String(err));
      }
    });
  };
}

export function apiTemporalConnection(address: string): Connection {
  return Connection.lazy({
    address,
    interceptors: [guardClosedChannel(makeGrpcRetryInterceptor(defaultGrpcRetryOptions()))],
  });
}
