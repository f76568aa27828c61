import type { RetentionPageInput, RetentionPageResult } from '../../src/contracts/retention-contract';
import type { Retention } from '../../src/runs/retention';

/**
 * Retention's pass, for its workflow: each page one activity. The workflow carries no workspace,
 * so the pages look at every workspace's runs and delete each run inside its own.
 */
export function createRetentionActivities(retention: Retention) {
  return {
    async retentionKeptActive(): Promise<number> {
      return retention.keptActive();
    },
    async retentionPrunePage(page: RetentionPageInput): Promise<RetentionPageResult> {
      return retention.prunePage(page);
    },
  };
}
