import type { BatchProvider } from '../engine/provider-batch-plan';
import type { GraphNode } from '../engine/run-contract';

/** A provider batch the workflow waits for: its record's key, its node, the provider's id for it. */
export interface ProviderBatchRef {
  key: string;
  nodeId: string;
  provider: BatchProvider;
  batchId: string;
  requests: number;
}

export interface SubmitProviderBatchesInput {
  batchRunId: string;
  round: number;
  /** The run's nodes: a held request's node says which provider its batch goes to. */
  nodes: GraphNode[];
}

export interface ProviderBatchesInput {
  batchRunId: string;
  round: number;
  batches: ProviderBatchRef[];
}

export interface ProviderBatchesPolled {
  ended: boolean;
}
