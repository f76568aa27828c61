import type { AnyBulkWriteOperation } from 'mongodb';
import type { Aggregate, Query, Schema } from 'mongoose';
import { DEFAULT_WORKSPACE, workspaceScope } from './workspace-scope';

/** What every document of a workspace's collection carries (the plugin below adds the path). */
export interface WorkspaceOwnedFields {
  workspace_id?: string;
}

const owned = new WeakSet<Schema>();

/** Whether the collection of this schema is a workspace's (workspaceOwned was applied to it). */
export const isWorkspaceOwned = (schema: Schema): boolean => owned.has(schema);

/** Every query operation Mongoose runs middleware for (Mongoose 9's list, less `validate`). */
const QUERIES = [
  'countDocuments',
  'distinct',
  'estimatedDocumentCount',
  'find',
  'findOne',
  'findOneAndReplace',
  'findOneAndUpdate',
  'replaceOne',
  'updateMany',
  'updateOne',
  'deleteMany',
  'deleteOne',
  'findOneAndDelete',
] as const;

/** Operations whose update is a whole document: it must keep the workspace it replaces. */
const REPLACES = new Set<string>(['findOneAndReplace', 'replaceOne']);

type Stampable = Record<string, unknown> & { workspace_id?: unknown };

function stamp(doc: Stampable, workspaceId: string): void {
  if (doc.workspace_id === undefined || doc.workspace_id === null) doc.workspace_id = workspaceId;
}

/**
 * Makes a collection a workspace's: each document carries `workspace_id`, and inside a workspace's
 * scope (workspace-scope.ts) every query, update, delete, count and aggregation sees only that
 * workspace's documents, and every insert is stamped with it. Another workspace's document is then
 * absent to every service, whatever id or filter a request names: its routes answer 404 without
 * knowing workspaces exist. Outside any scope (the fleet's own loops, tools writing directly) queries
 * see every workspace, and a new document is `default`'s unless it names its own.
 */
export function workspaceOwned(schema: Schema): void {
  owned.add(schema);
  // A new document takes the current workspace when it is built (before validation, which a
  // pre-save hook would follow); outside any, `default`'s, as everything of before workspaces is.
  schema.add({
    workspace_id: {
      type: String,
      required: true,
      index: true,
      default: () => workspaceScope.current() ?? DEFAULT_WORKSPACE,
    },
  });

  schema.pre([...QUERIES], { document: false, query: true }, function scopeQuery(this: Query<unknown, unknown>) {
    const workspaceId = workspaceScope.current();
    if (workspaceId === null) return;
    this.where({ workspace_id: workspaceId });
    if (REPLACES.has((this as unknown as { op?: string }).op ?? '')) {
      const replacement = this.getUpdate() as Stampable | null;
      if (replacement) replacement.workspace_id = workspaceId;
    }
  });

  schema.pre('aggregate', function scopeAggregate(this: Aggregate<unknown>) {
    const workspaceId = workspaceScope.current();
    if (workspaceId !== null) this.pipeline().unshift({ $match: { workspace_id: workspaceId } });
  });

  schema.pre('insertMany', function stampInserts(docs: unknown) {
    const workspaceId = workspaceScope.current() ?? DEFAULT_WORKSPACE;
    for (const doc of Array.isArray(docs) ? docs : [docs]) stamp(doc as Stampable, workspaceId);
  });

  schema.pre('bulkWrite', function scopeBulk(ops: AnyBulkWriteOperation<Stampable>[]) {
    const workspaceId = workspaceScope.current();
    if (workspaceId === null) return;
    for (const op of ops) scopeBulkOperation(op, workspaceId);
  });
}

function scopeBulkOperation(op: AnyBulkWriteOperation<Stampable>, workspaceId: string): void {
  const inWorkspace = (filter: object) => Object.assign(filter, { workspace_id: workspaceId });
  if ('insertOne' in op) stamp(op.insertOne.document, workspaceId);
  else if ('replaceOne' in op) {
    inWorkspace(op.replaceOne.filter);
    op.replaceOne.replacement.workspace_id = workspaceId;
  } else if ('updateOne' in op) inWorkspace(op.updateOne.filter);
  else if ('updateMany' in op) inWorkspace(op.updateMany.filter);
  else if ('deleteOne' in op) inWorkspace(op.deleteOne.filter);
  else if ('deleteMany' in op) inWorkspace(op.deleteMany.filter);
}
