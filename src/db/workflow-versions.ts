import { definitionHash } from './definition-hash';
import { insertWithNewId, isDuplicateKeyError } from './ids';
import { fromJsonText } from './json-text';
import type { Models, WorkflowDoc, WorkflowVersionDoc } from './models';

const MAX_RACES = 10;
/** Versions this process has seen, by workflow and definition hash (the run path's hottest read). */
const KNOWN_VERSIONS_MAX = 1000;
/** Versions read by id (every read of a run names its version): a few hundred runs' worth. */
const READ_VERSIONS_MAX = 200;

/** Keeps `doc` under `key`, dropping the oldest entry once the map holds `max`. */
function keep(map: Map<string, WorkflowVersionDoc>, max: number, key: string, doc: WorkflowVersionDoc) {
  if (map.size >= max) map.delete(map.keys().next().value as string);
  map.set(key, doc);
  return doc;
}

/**
 * The one writer of workflow versions: the version a run pins (the api's runs and a schedule's
 * fires in the worker alike), and their removal with their workflow.
 */
export function createWorkflowVersions(models: Models, clock: () => Date = () => new Date()) {
  const { WorkflowVersion } = models;
  const idTaken = async (id: string) => (await WorkflowVersion.exists({ _id: id })) !== null;
  /**
   * A version never changes once written (it is deleted only with its workflow, whose load fails
   * first), so a run of a definition already run here pins it without reading it again.
   */
  const known = new Map<string, WorkflowVersionDoc>();
  const remember = (key: string, doc: WorkflowVersionDoc) => keep(known, KNOWN_VERSIONS_MAX, key, doc);
  const read = new Map<string, WorkflowVersionDoc>();

  /**
   * The version a run pins: an existing version of this workflow with an equal definition hash,
   * else a new one numbered max+1. Concurrent starts race on the unique indexes (workflow, hash)
   * and (workflow, version); the loser re-reads.
   */
  async function ensureVersion(workflow: WorkflowDoc): Promise<WorkflowVersionDoc> {
    const hash = definitionHash(fromJsonText(workflow.definition));
    const key = `${workflow._id} ${hash}`;
    const cached = known.get(key);
    if (cached) return cached;
    for (let attempt = 0; attempt < MAX_RACES; attempt++) {
      const existing = await WorkflowVersion.findOne({
        workflow_id: workflow._id,
        definition_hash: hash,
      }).lean<WorkflowVersionDoc>();
      if (existing) return remember(key, existing);
      const latest = await WorkflowVersion.findOne({ workflow_id: workflow._id })
        .sort({ version: -1 })
        .lean<WorkflowVersionDoc>();
      const now = clock();
      try {
        return await insertWithNewId(models.conn, 'workflowVersion', idTaken, async (id, seq) => {
          const doc: WorkflowVersionDoc = {
            _id: id,
            seq,
            workflow_id: workflow._id,
            version: (latest?.version ?? 0) + 1,
            name: workflow.name,
            description: workflow.description ?? null,
            definition: workflow.definition,
            definition_hash: hash,
            created_at: now,
            updated_at: now,
          };
          await WorkflowVersion.create(doc);
          return remember(key, doc);
        });
      } catch (err) {
        // Another run created this hash or this number first: read again.
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
    throw new Error(`could not create a version of ${workflow._id}: too many concurrent writers`);
  }

  return {
    ensureVersion,
    /** A version by id, read once per process while it is among the recently read (versions never change). */
    async byId(id: string): Promise<WorkflowVersionDoc | null> {
      const cached = read.get(id);
      if (cached) return cached;
      const doc = await WorkflowVersion.findById(id).lean<WorkflowVersionDoc>();
      return doc ? keep(read, READ_VERSIONS_MAX, id, doc) : null;
    },
    /** Every version of a deleted workflow. */
    async removeAllOf(workflowId: string): Promise<void> {
      for (const [id, doc] of read) if (doc.workflow_id === workflowId) read.delete(id);
      await WorkflowVersion.deleteMany({ workflow_id: workflowId });
    },
  };
}

export type WorkflowVersions = ReturnType<typeof createWorkflowVersions>;
