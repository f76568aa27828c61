import type { NodeOutput } from './run-contract';

/** A run's blocking answer as its final save wrote it: its outputs by node id. */
export interface RunOutcome {
  outputsById: Record<string, NodeOutput>;
}

export interface ExpectedOutcome {
  outcome: Promise<RunOutcome>;
  /** The answer came another way (or never will): forget the run. */
  cancel(): void;
}

/**
 * In-process notice of runs whose final record has just been saved, for a process that hosts both
 * the api and a worker (`npm run dev`). A blocking run answers as soon as its end is durable in
 * MongoDB, instead of after Temporal has recorded the workflow's completion and handed the result
 * back through a long poll. The record is what a later GET shows, so the answer is the same; a
 * run that ends elsewhere (another worker) is answered from Temporal as before.
 */
export function createRunOutcomes() {
  const waiting = new Map<string, (outcome: RunOutcome) => void>();
  return {
    /** Registered before the run's workflow starts, so a fast run cannot end unheard. */
    expect(runId: string): ExpectedOutcome {
      const outcome = new Promise<RunOutcome>((resolve) => waiting.set(runId, resolve));
      return { outcome, cancel: () => void waiting.delete(runId) };
    },
    /** The run's final save has been written. */
    publish(runId: string, outcome: RunOutcome): void {
      const resolve = waiting.get(runId);
      if (!resolve) return;
      waiting.delete(runId);
      resolve(outcome);
    },
  };
}

export type RunOutcomes = ReturnType<typeof createRunOutcomes>;
