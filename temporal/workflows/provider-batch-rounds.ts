import { sleep } from '@temporalio/workflow';
import type { BatchActivities, ProviderBatchActivities } from '../activities';
import type { BatchCursor, BatchRows } from '../../src/contracts/batch-contract';
import type { ProviderBatchRef } from '../../src/contracts/provider-batch-contract';
import type { DryRun } from '../../src/engine/dry-run';

/** The first look at a new provider batch (the promise: within 5 s), then twice as long each time. */
const FIRST_POLL_MS = 5000;

/** What the rounds take besides the rows: chunk size, how long at most between two polls. */
export interface RoundSettings {
  chunkRows: number;
  pollMaxSeconds: number;
  /** An eval's batch: its rows are dry runs. */
  dryRun?: DryRun;
}

/**
 * A provider-batch run (llm_mode `provider_batch`): its rows advance round by round. In a round
 * every row runs as far as it can (chunk activities, as inline mode); a SingleLLMCallNode's call
 * without an answer is held. The held calls go out as one provider batch per node; the workflow
 * waits on timers (no worker slot held, any length of time), polls with backoff, hands the
 * answers to the rows and starts the next round. Rows end in the round that needs no more answers.
 */
export async function runProviderBatchRounds(
  chunks: BatchActivities,
  bookkeeping: BatchActivities & ProviderBatchActivities,
  rows: BatchRows,
  cursor: BatchCursor,
  settings: RoundSettings,
): Promise<void> {
  for (let round = 0; ; round++) {
    const ended = { ok: 0, failed: 0 };
    let held = 0;
    for (let start = 0; start < rows.rowCount; start += settings.chunkRows) {
      const end = Math.min(rows.rowCount, start + settings.chunkRows);
      const result = await chunks.runBatchChunk({
        batch: rows,
        start,
        end,
        before: { ...ended },
        round,
        ...(settings.dryRun ? { dryRun: settings.dryRun } : {}),
      });
      ended.ok += result.ok;
      ended.failed += result.failed;
      held += result.held ?? 0;
    }
    cursor.ok = ended.ok;
    cursor.failed = ended.failed;
    if (held === 0) break;
    const batchRunId = rows.parentRunId;
    const batches = await bookkeeping.submitProviderBatches({ batchRunId, round, nodes: rows.definition.nodes });
    await waitForBatches(bookkeeping, { batchRunId, round, batches }, settings.pollMaxSeconds);
    await bookkeeping.collectProviderBatches({ batchRunId, round, batches });
  }
  cursor.next = rows.rowCount;
}

async function waitForBatches(
  bookkeeping: ProviderBatchActivities,
  input: { batchRunId: string; round: number; batches: ProviderBatchRef[] },
  pollMaxSeconds: number,
): Promise<void> {
  let delay = FIRST_POLL_MS;
  for (;;) {
    await sleep(delay);
    if ((await bookkeeping.pollProviderBatches(input)).ended) return;
    delay = Math.min(delay * 2, pollMaxSeconds * 1000);
  }
}
