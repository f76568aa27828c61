// The smallest workflows Temporal can run, for bench/temporal-floor.ts: what the engine itself
// costs per run on this machine, whatever a workflow does.
import { proxyActivities, proxyLocalActivities, upsertSearchAttributes } from '@temporalio/workflow';
import { SpurRunStatus } from '../../../src/contracts/search-attributes';

const { noop } = proxyLocalActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '10s' });

/** Starts and completes: one workflow task. */
export async function bare(): Promise<number> {
  return 1;
}

/** One local activity (a marker), as a run's projection save is. */
export async function oneLocalActivity(): Promise<number> {
  await noop();
  return 1;
}

/** Two local activities (a pure region, then the run's save). */
export async function twoLocalActivities(): Promise<number> {
  await noop();
  await noop();
  return 1;
}

/** Two local activities and a search-attribute upsert: the shape of a 5-node Spur run today. */
export async function spurShaped(): Promise<number> {
  await noop();
  await noop();
  upsertSearchAttributes([{ key: SpurRunStatus, value: 'COMPLETED' }]);
  return 1;
}

/** One command of a run's history, as bench/run-cost.ts reads it off a Spur run. */
export type FloorStep = 'local' | 'activity' | 'upsert';

const { noopActivity } = proxyActivities<{ noopActivity(): Promise<void> }>({ startToCloseTimeout: '10s' });

/**
 * The commands a Spur run's history holds (local activities, activities, search-attribute
 * upserts), in its order, with nothing behind them: the floor under a run of that shape.
 */
export async function shaped(steps: FloorStep[]): Promise<number> {
  for (const step of steps) {
    if (step === 'local') await noop();
    else if (step === 'activity') await noopActivity();
    else upsertSearchAttributes([{ key: SpurRunStatus, value: 'COMPLETED' }]);
  }
  return steps.length;
}
