import { trusted } from 'mongoose';
import {
  DONE_OUTCOMES,
  type RunActionDecider,
  type RunActionKind,
  type RunActionOutcome,
  type RunActionStatus,
} from '../contracts/run-action-contract';
import { insertIgnoringDuplicates, insertWithNewId } from './ids';
import { toJsonText } from './json-text';
import type { Models, RunActionDoc, RunActionItemDoc } from './models';

export interface NewRunAction {
  action: RunActionKind;
  filter: unknown;
  runIds: readonly string[];
  startedBy: string | null;
  startedByName: string | null;
  decider: RunActionDecider | null;
}

/** What acting on one run came to (an item leaves `pending` once). */
export interface ItemOutcome {
  outcome: Exclude<RunActionOutcome, 'pending'>;
  newRunId?: string | null;
  error?: string | null;
}

export interface Tally {
  done: number;
  failed: number;
}

/** Items are inserted in slices of this many: one insert per slice. */
const INSERT_SLICE = 500;

const itemId = (actionId: string, position: number) => `${actionId}:${position}`;

/**
 * The one writer of bulk actions and their items. The matches are fixed when the action is made:
 * one item per matched run, by position; acting on them only moves items out of `pending`.
 */
export function createRunActions(models: Models) {
  const { RunAction, RunActionItem } = models;

  const exists = async (id: string) => (await RunAction.exists({ _id: id })) !== null;

  async function progress(actionId: string, tally: Tally): Promise<void> {
    await RunAction.updateOne({ _id: actionId }, { $set: { done: tally.done, failed: tally.failed } });
  }

  return {
    async create(action: NewRunAction): Promise<RunActionDoc> {
      const doc = await insertWithNewId(models.conn, 'runAction', exists, async (id, seq) => {
        const made = {
          _id: id,
          seq,
          action: action.action,
          filter: toJsonText(action.filter),
          matched: action.runIds.length,
          status: 'RUNNING' as RunActionStatus,
          done: 0,
          failed: 0,
          started_by: action.startedBy,
          started_by_name: action.startedByName,
          decider: action.decider ? toJsonText(action.decider) : null,
          created_at: new Date(),
          ended_at: null,
          recorded: false,
        };
        await RunAction.create(made);
        return made;
      });
      const items = action.runIds.map((runId, position) => ({
        _id: itemId(doc._id, position),
        action_id: doc._id,
        position,
        run_id: runId,
        outcome: 'pending' as const,
        new_run_id: null,
        error: null,
        acted_at: null,
      }));
      for (let i = 0; i < items.length; i += INSERT_SLICE)
        await insertIgnoringDuplicates(RunActionItem, items.slice(i, i + INSERT_SLICE));
      // Only while it is still RUNNING: the reconciler may have given up on it meanwhile (then the
      // answer shows it FAILED, and nothing starts it).
      await RunAction.updateOne({ _id: doc._id, status: 'RUNNING' }, { $set: { recorded: true } });
      return (await RunAction.findById(doc._id).lean<RunActionDoc>()) as RunActionDoc;
    },

    get(actionId: string): Promise<RunActionDoc | null> {
      return RunAction.findById(actionId).lean<RunActionDoc>();
    },

    /** The items at positions `from` to `from + count - 1`, in order (by id: FerretDB finds each without a scan). */
    async itemsAt(actionId: string, from: number, count: number): Promise<RunActionItemDoc[]> {
      const ids = Array.from({ length: count }, (_, i) => itemId(actionId, from + i));
      const found = await Promise.all(ids.map((id) => RunActionItem.findById(id).lean<RunActionItemDoc>()));
      return found.filter((item): item is RunActionItemDoc => item !== null);
    },

    /** One page of an action's items, by position. */
    items(actionId: string, skip: number, limit: number): Promise<RunActionItemDoc[]> {
      return RunActionItem.find({ action_id: actionId })
        .sort({ position: 1 })
        .skip(skip)
        .limit(limit)
        .lean<RunActionItemDoc[]>();
    },

    /** Moves a pending item to its outcome; an item already settled keeps the outcome it has. */
    async settle(item: Pick<RunActionItemDoc, '_id'>, result: ItemOutcome): Promise<void> {
      await RunActionItem.updateOne(
        { _id: item._id, outcome: 'pending' },
        {
          $set: {
            outcome: result.outcome,
            new_run_id: result.newRunId ?? null,
            error: result.error ?? null,
            acted_at: new Date(),
          },
        },
      );
    },

    /** How the items stand, counted from the items themselves. */
    async tally(actionId: string): Promise<Tally> {
      const [done, failed] = await Promise.all([
        RunActionItem.countDocuments({ action_id: actionId, outcome: trusted({ $in: [...DONE_OUTCOMES] }) }),
        RunActionItem.countDocuments({ action_id: actionId, outcome: 'failed' }),
      ]);
      return { done, failed };
    },

    progress,

    /**
     * RUNNING actions made before `createdBefore`, oldest first, of every workspace: the
     * reconciler's page (it checks each one's workflow). Resumed after `after` (an id).
     */
    runningPage(createdBefore: Date, after: string | null, limit: number): Promise<RunActionDoc[]> {
      const filter: Record<string, unknown> = {
        status: 'RUNNING',
        created_at: trusted({ $lt: createdBefore }),
      };
      if (after !== null) filter._id = trusted({ $gt: after });
      return RunAction.find(filter).sort({ _id: 1 }).limit(limit).lean<RunActionDoc[]>();
    },

    /** Ends an action its api died recording (items missing): FAILED, nothing acted on. False if it was recorded meanwhile. */
    async abandonUnrecorded(actionId: string): Promise<boolean> {
      const ended = await RunAction.updateOne(
        { _id: actionId, status: 'RUNNING', recorded: false },
        { $set: { status: 'FAILED', ended_at: new Date() } },
      );
      return ended.modifiedCount === 1;
    },

    /**
     * The action has ended (or is stopped): its status, unless one is set already (a stop the api
     * recorded), with its final tally in the same write, so a reader never sees the one without the other.
     */
    async finish(actionId: string, status: Exclude<RunActionStatus, 'RUNNING'>, tally?: Tally): Promise<void> {
      const counts = tally ? { done: tally.done, failed: tally.failed } : {};
      const ended = await RunAction.updateOne(
        { _id: actionId, status: 'RUNNING' },
        { $set: { status, ended_at: new Date(), ...counts } },
      );
      if (ended.matchedCount === 0 && tally) await progress(actionId, tally);
    },
  };
}

export type RunActions = ReturnType<typeof createRunActions>;
