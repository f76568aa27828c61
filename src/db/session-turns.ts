import { trusted } from 'mongoose';
import { isDuplicateKeyError, nextSequence } from './ids';
import { fromJsonText, toJsonText } from './json-text';
import { createRunLookups } from './runs/run-lookups';
import type { Models, SessionTurnDoc } from './models';
import type { ChatTurnAppend } from '../contracts/run-contract';

/** A stored chat message as the `/session/` API shows it. */
export interface SessionMessage {
  id: string;
  session_id: string;
  run_id: string;
  content: unknown;
  created_at: Date;
}

function messagesOf(turn: SessionTurnDoc): SessionMessage[] {
  return [turn.user, turn.assistant].map((m) => ({
    id: m.id,
    session_id: turn.session_id,
    run_id: turn.run_id,
    content: fromJsonText(m.content),
    created_at: m.created_at,
  }));
}

/** Run order: the run's number, then its id (batch rows share their parent's number). */
function byRunOrder(a: SessionTurnDoc, b: SessionTurnDoc): number {
  return a.run_seq - b.run_seq || a.run_id.localeCompare(b.run_id, 'en', { numeric: true });
}

/** Reads and writes of chat turns; the only writer of `session_turns`. */
export function createSessionTurns(models: Models, clock: () => Date = () => new Date()) {
  const { SessionTurn, Session } = models;

  /** Each session's messages in run order, user before assistant. */
  async function messagesOfSessions(sessionIds: string[]): Promise<Map<string, SessionMessage[]>> {
    const out = new Map<string, SessionMessage[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return out;
    // Built here from ids, not from a request: trusted() keeps sanitizeFilter from neutralising it.
    const turns = await SessionTurn.find({ session_id: trusted({ $in: sessionIds }) }).lean<SessionTurnDoc[]>();
    for (const turn of turns.sort(byRunOrder)) out.get(turn.session_id)?.push(...messagesOf(turn));
    return out;
  }

  return {
    messagesOfSessions,
    async messagesOf(sessionId: string): Promise<SessionMessage[]> {
      return (await messagesOfSessions([sessionId])).get(sessionId) ?? [];
    },
    /**
     * Stores a run's turn once (the answer stamped now, the user message at its run's start): its `_id` is `<session>:<run>`, so a retried activity meets a
     * duplicate key and stops. A session deleted meanwhile gets nothing.
     */
    async appendTurn(turn: ChatTurnAppend): Promise<'stored' | 'already-stored' | 'no-session'> {
      const _id = `${turn.sessionId}:${turn.runId}`;
      if ((await SessionTurn.exists({ _id })) !== null) return 'already-stored';
      if ((await Session.exists({ _id: turn.sessionId })) === null) return 'no-session';
      const runSeq = await createRunLookups(models).seqOf(turn.runId);
      const [userNo, assistantNo] = [
        await nextSequence(models.conn, 'message'),
        await nextSequence(models.conn, 'message'),
      ];
      const message = (id: number, role: string, content: string, at: Date) => ({
        id: `M${id}`,
        content: toJsonText({ role, content }),
        created_at: at,
      });
      try {
        await SessionTurn.create({
          _id,
          session_id: turn.sessionId,
          run_id: turn.runId,
          run_seq: runSeq ?? 0,
          user: message(userNo, 'user', turn.userMessage, new Date(turn.userTime)),
          assistant: message(assistantNo, 'assistant', turn.assistantMessage, clock()),
        });
        return 'stored';
      } catch (err) {
        if (isDuplicateKeyError(err)) return 'already-stored';
        throw err;
      }
    },
    /** The turns of deleted runs: a session's history keeps only what its remaining runs said. */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length > 0) await SessionTurn.deleteMany({ run_id: trusted({ $in: runIds }) });
    },
    async removeOfSessions(sessionIds: string[]): Promise<void> {
      if (sessionIds.length > 0) await SessionTurn.deleteMany({ session_id: trusted({ $in: sessionIds }) });
    },
  };
}

export type SessionTurns = ReturnType<typeof createSessionTurns>;
