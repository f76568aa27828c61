import { ApplicationFailure } from '@temporalio/activity';
import { createProviderBatchRecords } from '../../src/db/provider-batch-records';
import type { RunEvents } from '../../src/db/runs/run-events';
import { modelOf } from '../../src/engine/model-calls';
import { type BatchProvider, batchProviderOf } from '../../src/engine/provider-batch-plan';
import type { BatchStage } from '../../src/engine/run-events';
import type { GraphNode } from '../../src/engine/run-contract';
import { providerBatchApi } from '../../src/nodes/ai/llm/provider-batches';
import type {
  ProviderBatchRef,
  ProviderBatchesInput,
  ProviderBatchesPolled,
  SubmitProviderBatchesInput,
} from '../../src/contracts/provider-batch-contract';
import type { NodeActivityDeps } from './execute-node.activity';

/** One request to a batch API (an upload, a create, a poll, a results file). */
const BATCH_API_TIMEOUT_MS = 120_000;

/**
 * The provider side of a provider-batch run: the requests its rows hold go out as one provider
 * batch per node (made once, found again after a crash), are polled, and their answers go back to
 * the rows. The run's record and event stream show each batch as it goes.
 */
export function createProviderBatchActivities(deps: NodeActivityDeps, events: RunEvents) {
  const records = createProviderBatchRecords(deps.models);
  const api = (provider: BatchProvider) =>
    providerBatchApi(provider, { secret: deps.secret, fetch: deps.fetch, timeoutMs: BATCH_API_TIMEOUT_MS });
  const tell = (batchRunId: string, stage: BatchStage) => events.append(batchRunId, { kind: 'stage', stage });

  return {
    /** The held requests of a round, one provider batch per node; those made already are not made again. */
    async submitProviderBatches(input: SubmitProviderBatchesInput): Promise<ProviderBatchRef[]> {
      const held = await records.heldByNode(input.batchRunId, input.round);
      const refs: ProviderBatchRef[] = [];
      for (const [nodeId, lines] of held) {
        const provider = providerOf(input.nodes, nodeId);
        const { doc, earlier } = await records.claim(input.batchRunId, nodeId, input.round, provider, lines.length);
        let batchId = doc.batch_id ?? null;
        if (!batchId) {
          const client = await api(provider);
          // An earlier try may have made the batch and ended before storing its id.
          if (earlier) batchId = await client.find(doc._id, doc.creating_since, lines.length);
          batchId ??= await client.create(doc._id, lines);
          await records.created(doc._id, batchId);
          await tell(input.batchRunId, {
            round: input.round,
            node_id: nodeId,
            provider,
            batch_id: batchId,
            status: 'submitted',
            requests: lines.length,
            succeeded: 0,
            failed: 0,
          });
        }
        refs.push({ key: doc._id, nodeId, provider, batchId, requests: doc.requests });
      }
      return refs;
    },

    /** Each batch's state, told when it changed; `ended` once every batch has. */
    async pollProviderBatches(input: ProviderBatchesInput): Promise<ProviderBatchesPolled> {
      let ended = true;
      const before = new Map((await records.ofRound(input.batchRunId, input.round)).map((d) => [d._id, d]));
      for (const ref of input.batches) {
        const state = await (await api(ref.provider)).state(ref.batchId);
        const known = before.get(ref.key);
        const changed =
          known?.status !== state.status ||
          known.succeeded !== state.counts.succeeded ||
          known.failed !== state.counts.failed;
        if (changed) {
          await records.polled(ref.key, {
            status: state.status,
            ended: state.ended,
            succeeded: state.counts.succeeded,
            failed: state.counts.failed,
          });
          await tell(input.batchRunId, {
            round: input.round,
            node_id: ref.nodeId,
            provider: ref.provider,
            batch_id: ref.batchId,
            status: state.status,
            requests: ref.requests,
            succeeded: state.counts.succeeded,
            failed: state.counts.failed,
          });
        }
        ended &&= state.ended;
      }
      return { ended };
    },

    /** The answers of ended batches, to the rows that wait for them (a request left unanswered fails, then goes online). */
    async collectProviderBatches(input: ProviderBatchesInput): Promise<void> {
      for (const ref of input.batches) {
        const { answers, failure } = await (await api(ref.provider)).answers(ref.batchId);
        const missing = {
          ok: false as const,
          error: failure ?? 'The provider batch ended without answering this request',
        };
        await records.storeAnswers(input.batchRunId, input.round, ref.nodeId, answers, missing);
      }
    },

    /** The rows' state between rounds goes once the batch has ended. */
    async endProviderBatchRun(input: { batchRunId: string }): Promise<void> {
      await records.removeRows(input.batchRunId);
    },
  };
}

function providerOf(nodes: readonly GraphNode[], nodeId: string): BatchProvider {
  const node = nodes.find((n) => n.id === nodeId);
  const provider = node ? batchProviderOf(modelOf(node) ?? '') : undefined;
  if (!provider)
    throw ApplicationFailure.nonRetryable(`Node ${nodeId} has no model of a provider with a batch API`, 'BatchRefused');
  return provider;
}
