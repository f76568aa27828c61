import { trusted } from 'mongoose';
import type { Role } from '../contracts/roles';
import { insertWithNewId } from './ids';
import type { AccessKeyDoc, Models } from './models';

export interface NewAccessKey {
  digest: string;
  user_id: string;
  name: string;
  role: Role;
  expires_at: Date | null;
  workspace_id: string;
}

/** How often a key's `last_used_at` is written at most. */
const USED_EVERY_MS = 60_000;

/** The only writer of `access_keys`. */
export function createAccessKeyStore(models: Models) {
  const { AccessKey } = models;
  const idTaken = async (id: string) => (await AccessKey.exists({ _id: id })) !== null;

  return {
    byDigest: (digest: string) => AccessKey.findOne({ digest }).lean<AccessKeyDoc>(),
    get: (id: string) => AccessKey.findById(id).lean<AccessKeyDoc>(),
    /** A user's keys, or every key (`userId` null), oldest first. */
    list: (userId: string | null) =>
      AccessKey.find(userId === null ? {} : { user_id: userId })
        .sort({ seq: 1 })
        .lean<AccessKeyDoc[]>(),
    create: (key: NewAccessKey) =>
      insertWithNewId(models.conn, 'accessKey', idTaken, async (id, seq) => {
        const doc = { _id: id, seq, ...key, created_at: new Date(), last_used_at: null };
        await AccessKey.create(doc);
        return doc as AccessKeyDoc;
      }),
    async remove(id: string): Promise<boolean> {
      return (await AccessKey.deleteOne({ _id: id })).deletedCount > 0;
    },
    async removeForUser(userId: string): Promise<void> {
      await AccessKey.deleteMany({ user_id: userId });
    },
    async removeForUserIn(userId: string, workspaceId: string): Promise<void> {
      await AccessKey.deleteMany({ user_id: userId, workspace_id: workspaceId });
    },
    async used(id: string, now: Date): Promise<void> {
      const before = new Date(now.getTime() - USED_EVERY_MS);
      await AccessKey.updateOne(
        { _id: id, $or: [{ last_used_at: null }, { last_used_at: trusted({ $lt: before }) }] },
        { $set: { last_used_at: now } },
      );
    },
  };
}

export type AccessKeyStore = ReturnType<typeof createAccessKeyStore>;
