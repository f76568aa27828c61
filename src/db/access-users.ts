import { trusted } from 'mongoose';
import type { Role } from '../contracts/roles';
import { insertWithNewId, isDuplicateKeyError } from './ids';
import type { AccessUserDoc, Models } from './models';
import { type Page, pageBounds } from './paging';

export interface NewAccessUser {
  username: string;
  email: string | null;
  display_name: string | null;
  /** The role in `default`; null: no member of it. */
  role: Role | null;
  password_hash: string | null;
  oidc_subject: string | null;
}

export type AccessUserChange = Partial<Omit<NewAccessUser, 'oidc_subject'> & { disabled: boolean }>;

/** A second user of the same username (or OpenID account): the caller answers 409. */
export class UsernameTaken extends Error {}

/** How often a user's `last_seen_at` is written at most: every request would be a write. */
const SEEN_EVERY_MS = 60_000;

/** The only writer of `access_users`. */
export function createAccessUserStore(models: Models) {
  const { AccessUser } = models;
  const idTaken = async (id: string) => (await AccessUser.exists({ _id: id })) !== null;

  return {
    get: (id: string) => AccessUser.findById(id).lean<AccessUserDoc>(),
    byUsername: (username: string) => AccessUser.findOne({ username }).lean<AccessUserDoc>(),
    byOidcSubject: (subject: string) => AccessUser.findOne({ oidc_subject: subject }).lean<AccessUserDoc>(),
    count: () => AccessUser.countDocuments(),
    async list(page: Page): Promise<AccessUserDoc[]> {
      const { skip, limit } = pageBounds(page);
      return AccessUser.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<AccessUserDoc[]>();
    },
    async create(user: NewAccessUser): Promise<AccessUserDoc> {
      try {
        return await insertWithNewId(models.conn, 'accessUser', idTaken, async (id, seq) => {
          if (user.oidc_subject !== null && (await AccessUser.exists({ oidc_subject: user.oidc_subject })))
            throw new UsernameTaken(user.oidc_subject);
          const doc = { _id: id, seq, ...user, disabled: false, created_at: new Date(), last_seen_at: null };
          await AccessUser.create(doc);
          return doc;
        });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new UsernameTaken(user.username);
        throw err;
      }
    },
    async update(id: string, change: AccessUserChange): Promise<AccessUserDoc | null> {
      try {
        return await AccessUser.findByIdAndUpdate(
          id,
          { $set: change },
          { returnDocument: 'after' },
        ).lean<AccessUserDoc>();
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new UsernameTaken(change.username ?? id);
        throw err;
      }
    },
    async remove(id: string): Promise<boolean> {
      return (await AccessUser.deleteOne({ _id: id })).deletedCount > 0;
    },
    /** Records that the user acted now, at most once a minute. */
    async seen(id: string, now: Date): Promise<void> {
      const before = new Date(now.getTime() - SEEN_EVERY_MS);
      await AccessUser.updateOne(
        { _id: id, $or: [{ last_seen_at: null }, { last_seen_at: trusted({ $lt: before }) }] },
        { $set: { last_seen_at: now } },
      );
    },
  };
}

export type AccessUserStore = ReturnType<typeof createAccessUserStore>;
