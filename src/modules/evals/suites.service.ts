import { ConflictError } from '../../errors';
import { isDuplicateKeyError } from '../../db/ids';
import type { EvalRecords } from '../../db/eval-records';
import type { EvalSuiteDoc, Models } from '../../db/models';
import { ScorerConfig } from '../../evals/scorer-config';
import { evalNotFound, invalidField } from './eval-errors';
import { MAX_EVAL_SAMPLES, type SuiteInput, type SuiteResponse } from './evals.schemas';

export function toSuiteResponse(doc: EvalSuiteDoc): SuiteResponse {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description ?? '',
    type: doc.category ?? 'Custom',
    dataset_id: doc.dataset_id,
    answer_column: doc.answer_column,
    input_columns: [...doc.input_columns],
    num_samples: Math.min(doc.row_count, MAX_EVAL_SAMPLES),
    scorer: ScorerConfig.parse(JSON.parse(doc.scorer)),
    pauses: doc.pauses ?? 'decline',
    live_node_types: [...(doc.live_node_types ?? [])],
    source_run_column: doc.source_run_column ?? null,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

/** Eval suites: a dataset, its answer and input columns, and a scorer; checked against the dataset when made. */
export function createSuiteService(models: Models, records: EvalRecords) {
  async function get(nameOrId: string): Promise<EvalSuiteDoc> {
    const doc = (await records.suite(nameOrId)) ?? (await records.suiteByName(nameOrId));
    if (!doc) throw evalNotFound.suite(nameOrId);
    return doc;
  }

  return {
    get,
    toResponse: toSuiteResponse,
    /** `from.sourceRunColumn`: a suite made from runs names the column holding each row's run. */
    async create(body: SuiteInput, from?: { sourceRunColumn: string }): Promise<SuiteResponse> {
      const dataset = await models.Dataset.findById(body.dataset_id, { columns: 1, row_count: 1 }).lean<{
        columns: string[];
        row_count: number;
      }>();
      if (!dataset) throw evalNotFound.dataset(body.dataset_id);
      if (!dataset.columns.includes(body.answer_column))
        throw invalidField(
          'answer_column',
          `Dataset ${body.dataset_id} has no column '${body.answer_column}' (its columns: ${dataset.columns.join(', ')})`,
          body.answer_column,
        );
      const unknown = body.input_columns.find((c) => !dataset.columns.includes(c));
      if (unknown !== undefined)
        throw invalidField('input_columns', `Dataset ${body.dataset_id} has no column '${unknown}'`, unknown);
      if (body.input_columns.includes(body.answer_column))
        throw invalidField('input_columns', 'The answer column cannot feed the workflow', body.answer_column);
      try {
        const doc = await records.createSuite(
          {
            name: body.name,
            description: body.description,
            category: body.type,
            dataset_id: body.dataset_id,
            answer_column: body.answer_column,
            input_columns: body.input_columns,
            row_count: dataset.row_count,
            scorer: JSON.stringify(body.scorer),
            pauses: body.pauses,
            live_node_types: body.live_node_types,
            source_run_column: from?.sourceRunColumn ?? null,
          },
          new Date(),
        );
        return toSuiteResponse(doc);
      } catch (err) {
        if (isDuplicateKeyError(err))
          throw new ConflictError(`An eval suite named '${body.name}' exists`, 'EVAL_SUITE_EXISTS');
        throw err;
      }
    },
    list: async () => (await records.suites()).map(toSuiteResponse),
    /** PySpur's cards: what its Evals page lists and launches by name. */
    cards: async () =>
      (await records.suites()).map((doc) => ({
        id: doc._id,
        name: doc.name,
        description: doc.description ?? '',
        type: doc.category ?? 'Custom',
        num_samples: Math.min(doc.row_count, MAX_EVAL_SAMPLES),
        paper_link: '',
        file_name: doc._id,
      })),
    async remove(id: string): Promise<void> {
      if (!(await records.removeSuite(id))) throw evalNotFound.suite(id);
    },
  };
}

export type SuiteService = ReturnType<typeof createSuiteService>;
