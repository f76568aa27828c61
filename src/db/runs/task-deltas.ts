import { trusted } from 'mongoose';
import type { Models, TaskDeltaDoc } from '../models';

/**
 * How long a streamed piece is kept: long enough for every watcher (polling every few hundred ms)
 * to have seen it. A delta is never read again after that: a client that connects later gets the
 * task's output from its `task.completed` event instead.
 */
export const DELTA_KEEP_MS = 30_000;

export interface TaskDelta {
  id: string;
  nodeId: string;
  text: string;
}

/**
 * The pieces of LLM replies running tasks stream, for the api's run watchers to pass on as
 * `task.delta`. Ephemeral, beside the durable event stream: FerretDB v1 has no TTL index, so old
 * ones are swept by age (`sweep`, run by the projection writes) and the rest go with their run.
 */
export function createTaskDeltas(models: Models) {
  const { TaskDelta } = models;
  let sweptAt = 0;
  return {
    async append(runId: string, nodeId: string, stream: string, seq: number, text: string): Promise<void> {
      await TaskDelta.create({
        _id: `${runId}:${nodeId}:${stream}:${seq}`,
        run_id: runId,
        node_id: nodeId,
        seq,
        text,
        at: new Date(),
      });
    },

    /** The run's stored pieces, oldest first (a handful: only the last seconds' are kept). */
    async ofRun(runId: string): Promise<TaskDelta[]> {
      const docs = await TaskDelta.find({ run_id: runId }).lean<TaskDeltaDoc[]>();
      docs.sort((a, b) => a.at.getTime() - b.at.getTime() || a.seq - b.seq);
      return docs.map((d) => ({ id: d._id, nodeId: d.node_id, text: d.text }));
    },

    /** Deletes every piece older than DELTA_KEEP_MS (one scan of a small collection), at most every third of that. */
    async sweep(now = Date.now()): Promise<void> {
      if (now - sweptAt < DELTA_KEEP_MS / 3) return;
      sweptAt = now;
      await TaskDelta.deleteMany({ at: trusted({ $lt: new Date(now - DELTA_KEEP_MS) }) });
    },

    async removeOfRuns(runIds: string[]): Promise<void> {
      if (runIds.length === 0) return;
      await TaskDelta.deleteMany({ run_id: trusted({ $in: runIds }) });
    },
  };
}

export type TaskDeltas = ReturnType<typeof createTaskDeltas>;
