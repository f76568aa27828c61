import { insertWithNewId, isDuplicateKeyError } from '../../db/ids';
import { fromJsonText, toJsonText } from '../../db/json-text';
import type { Models, UserDoc } from '../../db/models';
import { ConflictError, NotFoundError } from '../../errors';
import type { UserCreateInput, UserResponse, UserUpdateInput } from './users.schemas';

export const userNotFound = () => new NotFoundError('User not found', 'USER_NOT_FOUND');

function toUserResponse(doc: UserDoc): UserResponse {
  return {
    id: doc._id,
    external_id: doc.external_id,
    user_metadata: fromJsonText<Record<string, unknown>>(doc.user_metadata) ?? {},
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/**
 * PySpur's chat users. Unlike PySpur, `user_metadata` is stored on create (PySpur drops it), and
 * an unknown or malformed id is a 404 rather than a 500.
 */
export function createUserService(models: Models, onDelete: (userId: string) => Promise<void>) {
  const { User } = models;
  const idTaken = async (id: string) => (await User.exists({ _id: id })) !== null;

  async function load(id: string): Promise<UserDoc> {
    const doc = await User.findById(id).lean<UserDoc>();
    if (!doc) throw userNotFound();
    return doc;
  }

  async function byExternalId(externalId: string): Promise<UserDoc | null> {
    return User.findOne({ external_id: externalId }).lean<UserDoc>();
  }

  const conflict = (externalId: string) =>
    new ConflictError(`User with external_id ${externalId} already exists`, 'USER_EXISTS');

  return {
    load,
    byExternalId,
    /** An existing `external_id` answers with that user (PySpur's get-or-create). */
    async create(body: UserCreateInput): Promise<UserResponse> {
      const existing = await byExternalId(body.external_id);
      if (existing) return toUserResponse(existing);
      try {
        return toUserResponse(
          await insertWithNewId(models.conn, 'user', idTaken, async (id, seq) => {
            const now = new Date();
            const doc = {
              _id: id,
              seq,
              external_id: body.external_id,
              user_metadata: toJsonText(body.user_metadata),
              created_at: now,
              updated_at: now,
            };
            await User.create(doc);
            return doc;
          }),
        );
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
        // Another request created the same external_id meanwhile: answer with that user.
        const raced = await byExternalId(body.external_id);
        if (raced) return toUserResponse(raced);
        throw conflict(body.external_id);
      }
    },
    async list(skip: number, limit: number): Promise<{ users: UserResponse[]; total: number }> {
      const [docs, total] = await Promise.all([
        User.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<UserDoc[]>(),
        User.countDocuments(),
      ]);
      return { users: docs.map(toUserResponse), total };
    },
    async get(id: string): Promise<UserResponse> {
      return toUserResponse(await load(id));
    },
    async update(id: string, body: UserUpdateInput): Promise<UserResponse> {
      const doc = await load(id);
      const set: Partial<UserDoc> = { updated_at: new Date() };
      if (body.external_id != null && body.external_id !== doc.external_id) {
        if (await byExternalId(body.external_id)) throw conflict(body.external_id);
        set.external_id = body.external_id;
      }
      if (body.user_metadata != null) set.user_metadata = toJsonText(body.user_metadata);
      try {
        await User.updateOne({ _id: id }, { $set: set });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw conflict(body.external_id ?? '');
        throw err;
      }
      return toUserResponse(await load(id));
    },
    /** Removes the user with its sessions and their messages (PySpur cascades too). */
    async remove(id: string): Promise<void> {
      await load(id);
      await onDelete(id);
      await User.deleteOne({ _id: id });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
