import { CancelledFailure, type Client, WorkflowFailedError } from '@temporalio/client';
import type { RunRepository } from '../db/runs/run-repository';
import { taskOutputsById } from '../engine/task-book';
import type { ExpectedOutcome } from '../engine/run-outcomes';
import { SpurError } from '../errors';
import type { SpurRunResult } from '../contracts/run-contract';
import { runWorkflowId } from '../contracts/workflow-names';

export interface OutcomeWaitDeps {
  runRecords: Pick<RunRepository, 'statusOf' | 'tasksOf'>;
  temporal: Client;
  workflowIdPrefix: string;
  blockingWaitMs: number;
  /** Aborted when the api drains for shutdown: blocking waits end early (the runs go on). */
  stopping?: AbortSignal;
}

/**
 * With a worker in this process, how long a blocking run waits for its final save here before it
 * also asks Temporal for the result (the run may be on another worker): the wait's only cost.
 */
const LOCAL_ANSWER_FIRST_MS = 250;

/** First and longest wait between pause checks of a blocking run (it backs off: each read scans on FerretDB). */
const PAUSE_POLL_MS = { first: 100, max: 1000 };

export type BlockingOutcome =
  { kind: 'done'; runId: string; outputsById: SpurRunResult['outputsById'] } | { kind: 'still-running'; runId: string };

/** How a blocking request waits: for a run's outcome, or any workflow's result, within the blocking wait. */
export function createOutcomeWait(deps: OutcomeWaitDeps) {
  const { runRecords } = deps;

  /**
   * Waits for the run's result up to the configured limit; the run goes on either way. The answer
   * is the workflow's result; the projection is read only for a graph that can pause.
   */
  async function awaitOutcome(runId: string, mayPause: boolean, local?: ExpectedOutcome): Promise<BlockingOutcome> {
    const handle = deps.temporal.workflow.getHandle<() => Promise<SpurRunResult>>(
      runWorkflowId(runId, deps.workflowIdPrefix),
    );
    const watch = { stopped: false };
    let fallback: NodeJS.Timeout | undefined;
    // Answered from the final save in this process, or from Temporal if that does not come soon.
    const ended: Promise<Pick<SpurRunResult, 'outputsById'>> = local
      ? Promise.race([
          local.outcome,
          new Promise<void>((r) => (fallback = setTimeout(r, LOCAL_ANSWER_FIRST_MS))).then(() => handle.result()),
        ])
      : handle.result();
    try {
      const result = await within(mayPause ? Promise.race([ended, pausedOutputs(runId, watch)]) : ended);
      if (result === 'timeout' || result === 'stopping') return { kind: 'still-running', runId };
      return { kind: 'done', runId, outputsById: result.outputsById };
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        // A cancelled run: answer with what it produced, like a paused one.
        if (err.cause instanceof CancelledFailure)
          return { kind: 'done', runId, outputsById: await outputsFromTasks(runId) };
        throw new SpurError(
          'internal',
          'RUN_WORKFLOW_FAILED',
          `Run ${runId} failed: ${err.cause?.message ?? err.message}`,
        );
      }
      throw err;
    } finally {
      watch.stopped = true;
      clearTimeout(fallback);
    }
  }

  /**
   * A blocking run that reaches a pause answers 200 with the outputs so far (PySpur does), while
   * the run waits for its human. The workflow has not ended, so the projection tells.
   */
  async function pausedOutputs(runId: string, watch: { stopped: boolean }): Promise<SpurRunResult> {
    let wait = PAUSE_POLL_MS.first;
    while (!watch.stopped) {
      if ((await runRecords.statusOf(runId)) === 'PAUSED')
        return { status: 'PAUSED', outputsById: await outputsFromTasks(runId), message: null };
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 1.5, PAUSE_POLL_MS.max);
    }
    return new Promise<never>(() => undefined); // the result won the race; this one never settles
  }

  async function outputsFromTasks(runId: string): Promise<Record<string, Record<string, unknown>>> {
    return taskOutputsById(await runRecords.tasksOf(runId), ['COMPLETED', 'PAUSED']);
  }

  /** Races a workflow result against the blocking wait limit and the api's shutdown. */
  async function within<T>(promise: Promise<T>): Promise<T | 'timeout' | 'stopping'> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), deps.blockingWaitMs)),
    );
    const stopping = new Promise<'stopping'>((resolve) => {
      onStop = () => resolve('stopping');
      if (deps.stopping?.aborted) onStop();
      else deps.stopping?.addEventListener('abort', onStop, { once: true });
    });
    try {
      return await Promise.race([promise, timeout, stopping]);
    } finally {
      clearTimeout(timer);
      if (onStop) deps.stopping?.removeEventListener('abort', onStop);
    }
  }

  return { awaitOutcome, within };
}

export type OutcomeWait = ReturnType<typeof createOutcomeWait>;
