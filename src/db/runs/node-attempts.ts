import { trusted } from 'mongoose';
import { insertIgnoringDuplicates } from '../ids';
import type { Models } from '../models';
import { findNumbered, markOwnersOf, ownerMarks } from '../owner-marks';

/** A node's attempt that failed, as a run's task shows it (`failed_attempts`). */
export interface FailedAttempt {
  attempt: number;
  start_time: string | null;
  end_time: string;
  error: string;
}

/** The longest error kept per attempt: a node's error can be a whole response body. */
const MAX_ERROR_CHARS = 2000;

const attemptId = (runId: string, nodeId: string, attempt: number) => `${runId}/${nodeId}/${attempt}`;

/**
 * The failed attempts of runs' nodes (`node_attempts`): written by each attempt, read with the run.
 * A run with any is marked (`node_attempt_runs`), and reads look up the marked runs' attempts by
 * `_id` only (owner-marks.ts).
 */
export function createNodeAttempts(models: Models) {
  const { NodeAttempt, NodeAttemptRun } = models;
  const runs = ownerMarks(NodeAttemptRun);

  /** A node's attempts, 1, 2, … while found. */
  async function ofNode(runId: string, nodeId: string): Promise<FailedAttempt[]> {
    const docs = await findNumbered(NodeAttempt, (n) => attemptId(runId, nodeId, n));
    return docs.map((d) => ({
      attempt: d.attempt,
      start_time: d.start_time ?? null,
      end_time: d.end_time,
      error: d.error,
    }));
  }

  return {
    /**
     * Records a failed attempt once (a second write of the same attempt, a retried write, is
     * dropped), its run's mark first: a reader that finds the mark may find no attempt yet, never
     * the reverse.
     */
    async record(runId: string, nodeId: string, attempt: FailedAttempt): Promise<void> {
      await runs.mark({ _id: runId });
      await insertIgnoringDuplicates(NodeAttempt, [
        {
          _id: attemptId(runId, nodeId, attempt.attempt),
          run_id: runId,
          node_id: nodeId,
          ...attempt,
          error: attempt.error.slice(0, MAX_ERROR_CHARS),
        },
      ]);
    },

    /** Whether the attempt was recorded (a lost worker's was not). */
    async recorded(runId: string, nodeId: string, attempt: number): Promise<boolean> {
      return (await NodeAttempt.exists({ _id: attemptId(runId, nodeId, attempt) })) !== null;
    },

    /** Which of these runs had a failed attempt. */
    marked: runs.marked,

    /** Failed attempts by node, in attempt order, of a marked run's nodes (those its tasks name). */
    async ofRun(runId: string, nodeIds: readonly string[]): Promise<Map<string, FailedAttempt[]>> {
      const nodes = new Map<string, FailedAttempt[]>();
      const all = await Promise.all([...new Set(nodeIds)].map(async (id) => [id, await ofNode(runId, id)] as const));
      for (const [id, attempts] of all) if (attempts.length > 0) nodes.set(id, attempts);
      return nodes;
    },

    /** Everything of these runs (a run erased). */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length === 0) return;
      await NodeAttempt.deleteMany({ run_id: trusted({ $in: [...runIds] }) });
      await NodeAttemptRun.deleteMany({ _id: trusted({ $in: [...runIds] }) });
    },
  };
}

/**
 * Marks the runs whose attempts were recorded without a mark (by a version before marks, or an
 * older worker still running): one scan of `node_attempts` as an api starts.
 */
export async function markRunsWithAttempts(models: Models): Promise<void> {
  await markOwnersOf(models.NodeAttempt, { run_id: 1, workspace_id: 1 }, models.NodeAttemptRun, (d) => ({
    _id: d.run_id,
    ...(d.workspace_id ? { workspace_id: d.workspace_id } : {}),
  }));
}

export type NodeAttempts = ReturnType<typeof createNodeAttempts>;
