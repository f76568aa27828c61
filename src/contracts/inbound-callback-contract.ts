import { defineSignal } from '@temporalio/workflow';
import type { GraphNode } from '../engine/run-contract';

/**
 * A call reached a WaitForCallbackNode's URL and claimed it (src/db/inbound-callbacks.ts): the
 * api tells the run's workflow, which completes the node with the body. A signal, not an update:
 * the call is answered once claimed, whether or not a worker is up; a signal lost with its api is
 * found by the node's timeout, which reads the claim.
 */
export const inboundCallbackSignal = defineSignal<[InboundCallbackArrival]>('inboundCallback');

export interface InboundCallbackArrival {
  nodeId: string;
  body: Record<string, unknown>;
}

/** A WaitNode's `until`, rendered over its input in an activity (workflow code cannot load the renderer). */
export interface WaitUntilInput {
  node: GraphNode;
  input: Record<string, unknown>;
}

export interface CallbackExpiryInput {
  runId: string;
  nodeId: string;
}
