import type { Models, WorkspaceDoc } from '../../db/models';
import type { Page } from '../../db/paging';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../db/workspace-scope';
import { type WorkspaceStore, WorkspaceNameTaken, workspaceModels } from '../../db/workspaces';
import { ConflictError, NotFoundError } from '../../errors';
import type { WorkspaceResponse } from './workspaces.schemas';

const notFound = () => new NotFoundError('Workspace not found', 'WORKSPACE_NOT_FOUND');
const taken = (name: string) => new ConflictError(`A workspace named '${name}' exists already`, 'WORKSPACE_NAME_TAKEN');

const responseOf = (doc: WorkspaceDoc): WorkspaceResponse => ({
  id: doc._id,
  name: doc.name,
  created_at: doc.created_at.toISOString(),
});

/** Workspaces: a team's share of the installation, which nothing of another team's reaches. */
export function createWorkspaceService(models: Models, store: WorkspaceStore) {
  /** The collections that still hold something of the workspace, by name. */
  async function holdings(id: string): Promise<string[]> {
    const held = await workspaceScope.run(id, () =>
      Promise.all(
        workspaceModels(models).map(async (model) => ((await model.exists({})) ? model.collection.name : null)),
      ),
    );
    // Its keys too: a key of a workspace that is gone would act nowhere.
    if (await models.AccessKey.exists({ workspace_id: id })) held.push(models.AccessKey.collection.name);
    return held.filter((name): name is string => name !== null);
  }

  return {
    list: async (page: Page) => (await store.list(page)).map(responseOf),
    async get(id: string): Promise<WorkspaceResponse> {
      const doc = await store.get(id);
      if (!doc) throw notFound();
      return responseOf(doc);
    },
    async create(name: string): Promise<WorkspaceResponse> {
      try {
        return responseOf(await store.create(name));
      } catch (err) {
        if (err instanceof WorkspaceNameTaken) throw taken(name);
        throw err;
      }
    },
    async rename(id: string, name: string): Promise<WorkspaceResponse> {
      try {
        const doc = await store.rename(id, name);
        if (!doc) throw notFound();
        return responseOf(doc);
      } catch (err) {
        if (err instanceof WorkspaceNameTaken) throw taken(name);
        throw err;
      }
    },
    /** Only an empty workspace goes, and never `default`: a key of it would act nowhere. */
    async remove(id: string): Promise<void> {
      if (!(await store.get(id))) throw notFound();
      if (id === DEFAULT_WORKSPACE)
        throw new ConflictError('The default workspace cannot be deleted', 'WORKSPACE_DEFAULT');
      const held = await holdings(id);
      if (held.length > 0)
        throw new ConflictError(
          `The workspace still holds ${held.join(', ')}: delete those first`,
          'WORKSPACE_NOT_EMPTY',
        );
      await store.remove(id);
    },
  };
}

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;
