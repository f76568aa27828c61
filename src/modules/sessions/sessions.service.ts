import { trusted } from 'mongoose';
import { insertWithNewId } from '../../db/ids';
import type { Models, SessionDoc } from '../../db/models';
import type { SessionMessage, SessionTurns } from '../../db/session-turns';
import { NotFoundError } from '../../errors';
import type { WorkflowService } from '../workflows/workflows.service';
import type { UserService } from '../users/users.service';
import type { SessionCreateInput, SessionListFilter, SessionResponse } from './sessions.schemas';

const sessionNotFound = () => new NotFoundError('Session not found', 'SESSION_NOT_FOUND');

/** The user the chat panel of PySpur's UI talks as. */
export const TEST_USER = { external_id: 'test_user', user_metadata: { is_test: true } };

function toMessage(m: SessionMessage) {
  const at = m.created_at.toISOString();
  const content =
    m.content !== null && typeof m.content === 'object'
      ? (m.content as Record<string, unknown>)
      : { content: m.content };
  return { id: m.id, session_id: m.session_id, run_id: m.run_id, content, created_at: at, updated_at: at };
}

function toSessionResponse(doc: SessionDoc, messages: SessionMessage[]): SessionResponse {
  return {
    id: doc._id,
    workflow_id: doc.workflow_id,
    user_id: doc.user_id,
    external_id: doc.external_id ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    messages: messages.map(toMessage),
  };
}

export interface SessionServiceDeps {
  models: Models;
  turns: SessionTurns;
  users: UserService;
  workflows: WorkflowService;
}

/** PySpur's `/session/` router: a user's conversations with a chatbot workflow. */
export function createSessionService({ models, turns, users, workflows }: SessionServiceDeps) {
  const { Session } = models;
  const idTaken = async (id: string) => (await Session.exists({ _id: id })) !== null;

  async function respond(doc: SessionDoc): Promise<SessionResponse> {
    return toSessionResponse(doc, await turns.messagesOf(doc._id));
  }

  async function insert(userId: string, workflowId: string, externalId: string | null): Promise<SessionDoc> {
    return insertWithNewId(models.conn, 'session', idTaken, async (id, seq) => {
      const now = new Date();
      const doc: SessionDoc = {
        _id: id,
        seq,
        user_id: userId,
        workflow_id: workflowId,
        external_id: externalId,
        created_at: now,
        updated_at: now,
      };
      await Session.create(doc);
      return doc;
    });
  }

  async function load(id: string): Promise<SessionDoc> {
    const doc = await Session.findById(id).lean<SessionDoc>();
    if (!doc) throw sessionNotFound();
    return doc;
  }

  async function removeAll(filter: { user_id: string } | { _id: string }): Promise<void> {
    const ids = (await Session.find(filter, { _id: 1 }).lean<{ _id: string }[]>()).map((s) => s._id);
    await turns.removeOfSessions(ids);
    await Session.deleteMany({ _id: trusted({ $in: ids }) });
  }

  return {
    async create(body: SessionCreateInput): Promise<SessionResponse> {
      if (body.external_id) {
        const existing = await Session.findOne({ external_id: body.external_id }).lean<SessionDoc>();
        if (existing) return respond(existing);
      }
      await users.load(body.user_id);
      await workflows.load(body.workflow_id);
      return respond(await insert(body.user_id, body.workflow_id, body.external_id ?? null));
    },
    /** Newest first, with their messages; filtered by user and/or workflow. */
    async list(query: SessionListFilter): Promise<{ sessions: SessionResponse[]; total: number }> {
      const filter = {
        ...(query.user_id ? { user_id: query.user_id } : {}),
        ...(query.workflow_id ? { workflow_id: query.workflow_id } : {}),
      };
      const [docs, total] = await Promise.all([
        Session.find(filter).sort({ created_at: -1, seq: -1 }).skip(query.skip).limit(query.limit).lean<SessionDoc[]>(),
        Session.countDocuments(filter),
      ]);
      const messages = await turns.messagesOfSessions(docs.map((d) => d._id));
      return { sessions: docs.map((d) => toSessionResponse(d, messages.get(d._id) ?? [])), total };
    },
    async get(id: string): Promise<SessionResponse> {
      return respond(await load(id));
    },
    async remove(id: string): Promise<void> {
      await load(id);
      await removeAll({ _id: id });
    },
    removeOfUser: (userId: string) => removeAll({ user_id: userId }),
    /**
     * The chat panel's session: the test user's newest session with this workflow while it has no
     * messages yet, else a fresh one (PySpur's rule).
     */
    async createTest(workflowId: string): Promise<SessionResponse> {
      await workflows.load(workflowId);
      const user = await users.create(TEST_USER);
      const latest = await Session.findOne({ user_id: user.id, workflow_id: workflowId })
        .sort({ created_at: -1, seq: -1 })
        .lean<SessionDoc>();
      if (latest && (await turns.messagesOf(latest._id)).length === 0) return respond(latest);
      return respond(await insert(user.id, workflowId, null));
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
