import { Worker } from '@temporalio/worker';

type CreatorArgs = Parameters<(typeof Worker)['createWorkflowCreator']>;

/**
 * The Worker class Spur's workers are created with. The SDK runs every entry into a workflow's
 * sandbox under `vm`'s `timeout` (its `isolateExecutionTimeout`, 5 s by default), and Node enforces
 * that timeout with a watchdog thread started and joined on every entry: about 70 µs of CPU each,
 * 18 entries in a one-call run, about 1.3 CPU-ms (docs/performance.md). Without
 * `activationTimeoutMs` workflow code runs unwatched: it is Spur's own, deterministic, over graphs
 * the definition limits bound, so a hang there is a bug of ours that no input can cause. With it
 * (SPUR_WORKFLOW_ACTIVATION_TIMEOUT_MS, to find such a bug), the watchdog is back: an activation
 * that runs longer fails its workflow task instead of holding the workflow thread.
 */
export function workerClass(activationTimeoutMs: number | undefined): typeof Worker {
  return class SpurWorker extends Worker {
    protected static override createWorkflowCreator(...[bundle, compiled, logger]: CreatorArgs) {
      // Handed on to `vm.Script#runInContext`, where an undefined timeout starts no watchdog.
      const isolateExecutionTimeoutMs = activationTimeoutMs as number;
      return super.createWorkflowCreator(bundle, { ...compiled, isolateExecutionTimeoutMs }, logger);
    }
  };
}
