import type { Models, WorkflowDoc } from '../../db/models';
import { createHeldDeliveries } from '../../db/held-deliveries';
import { createWorkflowPauses } from '../../db/workflow-pauses';
import { insertWithNewId, isDuplicateKeyError } from '../../db/ids';
import { fromJsonText, toJsonText } from '../../db/json-text';
import { ConflictError, BadRequestError, notFound } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { defaultChatbotDefinition, defaultWorkflowDefinition } from './default-definitions';
import { type WorkflowDefinition, WorkflowDefinitionSchema } from '../../definitions/definition.schema';
import { candidateNames } from './unique-name';
import { createVersionService } from './versions.service';
import type { OutputVariable, WorkflowCreateInput, WorkflowPauseState, WorkflowResponse } from './workflows.schemas';
import { shownPause } from './workflow-pause-view';
import { leafOutputVariables } from '../../evals/output-variable';
import type { SubworkflowLinks } from './subworkflow-links';

export type Clock = () => Date;

export function toWorkflowResponse(doc: WorkflowDoc, paused: WorkflowPauseState | null = null): WorkflowResponse {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description ?? null,
    definition: fromJsonText<WorkflowDefinition>(doc.definition) as WorkflowDefinition,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    paused,
  };
}

/** Stored rows that no longer pass today's rules are left out of listings, as PySpur does. */
function isListable(doc: WorkflowDoc): boolean {
  try {
    return typeof doc.name === 'string' && WorkflowDefinitionSchema.safeParse(JSON.parse(doc.definition)).success;
  } catch {
    return false;
  }
}

/** Definition used on create: PySpur swaps an absent or node-less definition for a default. */
function definitionForCreate(given: WorkflowDefinition | null): WorkflowDefinition {
  if (!given) return defaultWorkflowDefinition();
  if (given.nodes.length === 0)
    return given.spur_type === 'chatbot' ? defaultChatbotDefinition() : defaultWorkflowDefinition();
  return given;
}

/**
 * `subworkflows`: the save-time checks of SubworkflowNodes against the workspace's other workflows
 * (cycles, depth, the workspace), which the definition's own schema cannot see.
 */
export function createWorkflowService(models: Models, subworkflows: SubworkflowLinks, clock: Clock = () => new Date()) {
  const { Workflow } = models;
  const pauses = createWorkflowPauses(models);
  const held = createHeldDeliveries(models);

  /** The workflows as answered, each with its pause (and how many deliveries it holds) when paused. */
  async function withPauses(docs: WorkflowDoc[]): Promise<WorkflowResponse[]> {
    const paused = await pauses.ofMany(docs.map((d) => d._id));
    return Promise.all(
      docs.map(async (doc) => {
        const pause = paused.get(doc._id);
        return toWorkflowResponse(doc, pause ? shownPause(pause, await held.count(doc._id)) : null);
      }),
    );
  }

  const idTaken = async (id: string) => (await Workflow.exists({ _id: id })) !== null;
  const nameTaken = async (name: string) => (await Workflow.exists({ name })) !== null;

  async function load(id: string): Promise<WorkflowDoc> {
    const doc = await Workflow.findById(id).lean<WorkflowDoc>();
    if (!doc) throw notFound.workflow();
    return doc;
  }

  /** Inserts under the first free name of `candidateNames` (the uniqueness rule of create/duplicate). */
  async function insertUniquelyNamed(
    name: string,
    description: string,
    definition: WorkflowDefinition,
  ): Promise<WorkflowDoc> {
    const now = clock();
    for (const candidate of candidateNames(name, now)) {
      try {
        return await insertWithNewId(models.conn, 'workflow', idTaken, async (id, seq) => {
          const doc = {
            _id: id,
            seq,
            name: candidate,
            description,
            definition: toJsonText(definition),
            created_at: now,
            updated_at: now,
          };
          await Workflow.create(doc);
          return doc;
        });
      } catch (err) {
        // Not an id clash (insertWithNewId retries those): the name is taken, try the next one.
        if (!isDuplicateKeyError(err) || !(await nameTaken(candidate))) throw err;
      }
    }
    throw new Error('unreachable: candidateNames is infinite');
  }

  async function answerOf(id: string): Promise<WorkflowResponse> {
    const [answer] = await withPauses([await load(id)]);
    return answer as WorkflowResponse;
  }

  async function findPage(page: Page): Promise<WorkflowResponse[]> {
    const { skip, limit } = pageBounds(page);
    const out: WorkflowDoc[] = [];
    let skipped = 0;
    for await (const doc of Workflow.find().sort({ created_at: -1, seq: -1 }).lean<WorkflowDoc[]>().cursor()) {
      if (!isListable(doc)) continue;
      if (skipped++ < skip) continue;
      out.push(doc);
      if (out.length === limit) break;
    }
    return withPauses(out);
  }

  return {
    load,
    /** Whether a workflow with this id is stored (a lookup by id; a database outage throws). */
    exists: idTaken,
    list: findPage,
    get: answerOf,
    async create(input: WorkflowCreateInput) {
      const name = input.name || 'Untitled Workflow';
      const definition = await subworkflows.checked({ id: null, name }, definitionForCreate(input.definition));
      const doc = await insertUniquelyNamed(name, input.description, definition);
      return toWorkflowResponse(doc);
    },
    async update(id: string, input: WorkflowCreateInput) {
      await load(id);
      if (!input.definition) throw new BadRequestError('Workflow definition is required to update a workflow');
      const definition = await subworkflows.checked({ id, name: input.name }, input.definition);
      const set = {
        name: input.name,
        description: input.description,
        definition: toJsonText(definition),
        updated_at: clock(),
      };
      try {
        await Workflow.updateOne({ _id: id }, { $set: set });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new ConflictError(`A workflow named '${input.name}' already exists`);
        throw err;
      }
      return answerOf(id);
    },
    async reset(id: string) {
      await load(id);
      await Workflow.updateOne(
        { _id: id },
        { $set: { definition: toJsonText(defaultWorkflowDefinition()), updated_at: clock() } },
      );
      return answerOf(id);
    },
    async duplicate(id: string) {
      const source = await load(id);
      const definition = fromJsonText<WorkflowDefinition>(source.definition) as WorkflowDefinition;
      return toWorkflowResponse(
        await insertUniquelyNamed(`${source.name} (Copy)`, source.description ?? '', definition),
      );
    },
    /** Removes the workflow and everything that belongs to it: versions and stored test files. */
    async remove(id: string, removeTestFiles: (workflowId: string) => Promise<void>) {
      await load(id);
      await removeTestFiles(id);
      await createVersionService(models).removeAllOf(id);
      await Workflow.deleteOne({ _id: id });
    },
    /** Days its finished runs are kept (null: the installation's default). */
    async retentionOf(id: string): Promise<number | null> {
      return (await load(id)).run_retention_days ?? null;
    },
    async setRetention(id: string, days: number | null): Promise<void> {
      await load(id);
      await Workflow.updateOne({ _id: id }, { $set: { run_retention_days: days } });
    },
    async outputVariables(id: string): Promise<OutputVariable[]> {
      return leafOutputVariables(fromJsonText<WorkflowDefinition>((await load(id)).definition) as WorkflowDefinition);
    },
  };
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;
