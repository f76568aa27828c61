import { trusted } from 'mongoose';
import { isDuplicateKeyError } from '../ids';
import type { Models, NodeAttemptDoc } from '../models';

/** A node's attempt that failed, as a run's task shows it (`failed_attempts`). */
export interface FailedAttempt {
  attempt: number;
  start_time: string | null;
  end_time: string;
  error: string;
}

/** The longest error kept per attempt: a node's error can be a whole response body. */
const MAX_ERROR_CHARS = 2000;

/** The failed attempts of runs' nodes (`node_attempts`): written by each attempt, read with the run. */
export function createNodeAttempts(models: Models) {
  const { NodeAttempt } = models;
  return {
    /** Records a failed attempt once; a second write of the same attempt (a retried write) is dropped. */
    async record(runId: string, nodeId: string, attempt: FailedAttempt): Promise<void> {
      try {
        await NodeAttempt.create({
          _id: `${runId}/${nodeId}/${attempt.attempt}`,
          run_id: runId,
          node_id: nodeId,
          ...attempt,
          error: attempt.error.slice(0, MAX_ERROR_CHARS),
        });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
    },

    /** Whether the attempt was recorded (a lost worker's was not). */
    async recorded(runId: string, nodeId: string, attempt: number): Promise<boolean> {
      return (await NodeAttempt.exists({ _id: `${runId}/${nodeId}/${attempt}` })) !== null;
    },

    /** Each run's failed attempts by node, in attempt order. */
    async ofRuns(runIds: readonly string[]): Promise<Map<string, Map<string, FailedAttempt[]>>> {
      const byRun = new Map<string, Map<string, FailedAttempt[]>>();
      if (runIds.length === 0) return byRun;
      const docs = await NodeAttempt.find({ run_id: trusted({ $in: [...runIds] }) })
        .sort({ attempt: 1 })
        .lean<NodeAttemptDoc[]>();
      for (const d of docs) {
        const nodes = byRun.get(d.run_id) ?? new Map<string, FailedAttempt[]>();
        byRun.set(d.run_id, nodes);
        const list = nodes.get(d.node_id) ?? [];
        nodes.set(d.node_id, list);
        list.push({ attempt: d.attempt, start_time: d.start_time ?? null, end_time: d.end_time, error: d.error });
      }
      return byRun;
    },

    /** Everything of these runs (a run erased). */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length === 0) return;
      await NodeAttempt.deleteMany({ run_id: trusted({ $in: [...runIds] }) });
    },
  };
}

export type NodeAttempts = ReturnType<typeof createNodeAttempts>;
