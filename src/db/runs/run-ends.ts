import type { RunStatus } from '../../engine/statuses';
import { metrics } from '../../metrics/metrics';

/**
 * A run's record has just become final: counted by its status and timed from its record's start.
 * Called where the write that ends it succeeds, once per run (a retried write finds it ended).
 */
export function countRunEnd(status: RunStatus, startTime: Date | null | undefined, endTime: Date): void {
  metrics.runsFinished.inc({ status });
  if (startTime) metrics.runDuration.observe({ status }, Math.max(0, endTime.getTime() - startTime.getTime()) / 1000);
}
