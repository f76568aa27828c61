import { type Model, trusted } from 'mongoose';
import { eachAtMost } from '../at-most-at-once';
import { insertWithNewId, isDuplicateKeyError } from './ids';
import { allModels, type Models, type WorkspaceDoc } from './models';
import { type Page, pageBounds } from './paging';
import { isWorkspaceOwned } from './workspace-owned';
import { DEFAULT_WORKSPACE } from './workspace-scope';

/** A second workspace of the same name: the caller answers 409. */
export class WorkspaceNameTaken extends Error {}

/** The models whose documents belong to a workspace (those workspace-owned.ts was applied to). */
export function workspaceModels(models: Models): (typeof Model)[] {
  return allModels(models).filter((m) => isWorkspaceOwned(m.schema));
}

/** Collections looked at at once: one connection each. */
const MIGRATE_AT_ONCE = 7;

/** Single-field unique indexes the per-workspace ones replaced: a name was unique in the whole installation. */
const INSTALLATION_WIDE_UNIQUE = new Set(['name_1', 'tool_name_1', 'external_id_1']);

const uniquePerWorkspace = (model: typeof Model) =>
  model.schema.indexes().some(([fields, options]) => options?.unique === true && 'workspace_id' in fields);

/**
 * Moves an installation from before workspaces into them: every document without a workspace goes
 * to `default` (ids, contents and answers unchanged), at every start, so a collection that became a
 * workspace's in a later version is placed too. Once, the indexes that kept a name unique across
 * the installation are dropped for the per-workspace ones; `default` itself is created after them,
 * so a migration cut short runs again at the next start. Runs outside any workspace.
 */
export async function migrateToWorkspaces(models: Models): Promise<void> {
  const { Workspace } = models;
  const first = !(await Workspace.exists({ _id: DEFAULT_WORKSPACE }));
  const unplaced = { workspace_id: trusted({ $exists: false }) };
  // A read first: an update costs FerretDB ten times as much, and a placed database has nothing to move.
  await eachAtMost(workspaceModels(models), MIGRATE_AT_ONCE, async (model) => {
    if (await model.exists(unplaced)) await model.updateMany(unplaced, { $set: { workspace_id: DEFAULT_WORKSPACE } });
    if (!first || !uniquePerWorkspace(model)) return;
    for (const index of await model.collection.indexes())
      if (index.unique && index.name && INSTALLATION_WIDE_UNIQUE.has(index.name))
        await model.collection.dropIndex(index.name);
  });
  if (!first) return;
  try {
    await Workspace.create({ _id: DEFAULT_WORKSPACE, seq: 0, name: DEFAULT_WORKSPACE, created_at: new Date() });
  } catch (err) {
    // Another process finished the same migration first.
    if (!isDuplicateKeyError(err)) throw err;
  }
}

/** The only writer of `workspaces`. */
export function createWorkspaceStore(models: Models) {
  const { Workspace } = models;
  const idTaken = async (id: string) => (await Workspace.exists({ _id: id })) !== null;
  return {
    get: (id: string) => Workspace.findById(id).lean<WorkspaceDoc>(),
    async list(page: Page): Promise<WorkspaceDoc[]> {
      const { skip, limit } = pageBounds(page);
      return Workspace.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<WorkspaceDoc[]>();
    },
    /** Of the workspaces named, those that exist, oldest first. */
    async listOf(ids: string[], page: Page): Promise<WorkspaceDoc[]> {
      const { skip, limit } = pageBounds(page);
      return Workspace.find({ _id: trusted({ $in: ids }) })
        .sort({ seq: 1 })
        .skip(skip)
        .limit(limit)
        .lean<WorkspaceDoc[]>();
    },
    async create(name: string): Promise<WorkspaceDoc> {
      try {
        return await insertWithNewId(models.conn, 'workspace', idTaken, async (id, seq) => {
          const doc = { _id: id, seq, name, created_at: new Date() };
          await Workspace.create(doc);
          return doc;
        });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new WorkspaceNameTaken(name);
        throw err;
      }
    },
    async rename(id: string, name: string): Promise<WorkspaceDoc | null> {
      try {
        return await Workspace.findByIdAndUpdate(
          id,
          { $set: { name } },
          { returnDocument: 'after' },
        ).lean<WorkspaceDoc>();
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new WorkspaceNameTaken(name);
        throw err;
      }
    },
    async remove(id: string): Promise<boolean> {
      return (await Workspace.deleteOne({ _id: id })).deletedCount > 0;
    },
  };
}

export type WorkspaceStore = ReturnType<typeof createWorkspaceStore>;
