import { trusted } from 'mongoose';
import { isPauseRecordOf } from '../../contracts/pauses';
import type { EventHead } from '../../engine/run-events';
import { fromJsonText } from '../json-text';
import type { Models, PauseDoc } from '../models';
import { HEAD_FIELDS, type StoredHead } from './run-events';

/** A run as a read of its pauses needs it: its id and its stream's head (read here when only the id is known). */
export type PausedRun = string | ({ _id: string } & StoredHead);

/**
 * The pauses a run's head lists: those open now and every one it opened, oldest first. Null where
 * the head cannot vouch for them (none yet, stored before it listed every pause, or an older
 * worker opened one it did not list).
 */
function listedPauses(run: StoredHead): { open: string[]; all: string[] } | null {
  const head = fromJsonText<EventHead>(run.event_head);
  const all = head?.opened;
  if (!head || !all || !head.pauses.every((id) => all.includes(id))) return null;
  return { open: head.pauses, all };
}

/**
 * A run's human pauses (`pauses`), found by `_id` from the list its event head keeps, which is
 * saved in the same update as the save that opens each pause (after the pause's record). FerretDB
 * v1 answers any other filter by scanning the collection: finding them by `run_id` made the inbox
 * and a pause history cost in proportion to every pause ever recorded. Runs whose head does not
 * list them are read the old way.
 */
export function createRunPauses(models: Models) {
  const { Run, Pause } = models;

  async function withHead(run: PausedRun): Promise<({ _id: string } & StoredHead) | null> {
    if (typeof run !== 'string') return run;
    const head = await Run.findById(run, HEAD_FIELDS).lean<StoredHead>();
    return head ? { _id: run, ...head } : null;
  }

  async function byIds(ids: readonly string[]): Promise<PauseDoc[]> {
    const docs = await Promise.all(ids.map((id) => Pause.findById(id).lean<PauseDoc>()));
    return docs.filter((d): d is PauseDoc => d !== null);
  }

  return {
    /** The run's open pauses, oldest first. */
    async openOf(ref: PausedRun): Promise<PauseDoc[]> {
      const run = await withHead(ref);
      if (!run) return [];
      const listed = listedPauses(run);
      if (!listed) return Pause.find({ run_id: run._id, resume_time: null }).sort({ pause_time: 1 }).lean<PauseDoc[]>();
      // A pause being resolved may still be listed: its record says.
      return (await byIds(listed.open)).filter((p) => p.resume_time === null);
    },

    /**
     * Which of these runs have an open pause at the node, as their heads list them, in the order
     * given; runs whose head does not list their pauses are looked up by `run_id`, in one query.
     */
    async openAt(runs: readonly ({ _id: string } & StoredHead)[], nodeId: string): Promise<string[]> {
      const unlisted: string[] = [];
      const listedAt = new Set<string>();
      for (const run of runs) {
        const listed = listedPauses(run);
        if (!listed) unlisted.push(run._id);
        else if (listed.open.some((id) => isPauseRecordOf(id, run._id, nodeId))) listedAt.add(run._id);
      }
      const found =
        unlisted.length === 0
          ? []
          : await Pause.find(
              { run_id: trusted({ $in: unlisted }), node_id: nodeId, resume_time: null },
              { run_id: 1 },
            ).lean<Pick<PauseDoc, 'run_id'>[]>();
      const at = new Set([...listedAt, ...found.map((p) => p.run_id)]);
      return runs.filter((r) => at.has(r._id)).map((r) => r._id);
    },

    /** One page of the run's pauses, newest first. */
    async pageOf(ref: PausedRun, skip: number, limit: number): Promise<PauseDoc[]> {
      const run = await withHead(ref);
      if (!run) return [];
      const listed = listedPauses(run);
      if (!listed)
        return Pause.find({ run_id: run._id })
          .sort({ pause_time: -1, _id: -1 })
          .skip(skip)
          .limit(limit)
          .lean<PauseDoc[]>();
      return byIds([...listed.all].reverse().slice(skip, skip + limit));
    },
  };
}

export type RunPauses = ReturnType<typeof createRunPauses>;
