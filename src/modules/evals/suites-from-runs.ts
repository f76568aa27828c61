import { Readable } from 'node:stream';
import type { RunLookups } from '../../db/runs/run-lookups';
import { fromJsonText } from '../../db/json-text';
import type { Values } from '../../db/values';
import type { OutputVariable } from '../../evals/output-variable';
import { outputVariableOf } from '../../evals/output-variable';
import type { DatasetService } from '../datasets/datasets.service';
import { ConflictError } from '../../errors';
import { invalidField } from './eval-errors';
import type { SuiteFromRunsInput, SuiteResponse } from './evals.schemas';
import type { SuiteService } from './suites.service';

/** Runs whose tasks are read at once: the rows of one page go out before the next is read. */
const PAGE = 200;
const ANSWER_COLUMN = 'expected_output';
/** Each row's run: in an eval of the suite, a node that would act hands on what it recorded there. */
const SOURCE_COLUMN = 'source_run_id';

export interface SuitesFromRunsDeps {
  runs: Pick<RunLookups, 'topLevelRunsOf' | 'tasksOfMany'>;
  values: Pick<Values, 'resolve'>;
  datasets: Pick<DatasetService, 'upload' | 'remove'>;
  suites: Pick<SuiteService, 'create' | 'get'>;
  outputVariables(workflowId: string): Promise<OutputVariable[]>;
}

/** One row: the run's initial inputs (its InputNode's fields) and the value it recorded for the output variable. */
interface RunRow {
  runId: string;
  inputs: Record<string, unknown>;
  answer: unknown;
}

/**
 * A regression suite from a workflow's production runs: the top-level runs that match the filter
 * (newest first) become a dataset, each row a run's initial inputs and, as its expected answer, the value
 * the run recorded for `output_variable`; the suite scores over it (JSON equality unless another
 * scorer is named). Runs that recorded no such value (a failed node, another version's outputs)
 * are left out. The dataset is stored through the upload path, as a JSONL file.
 */
export function createSuitesFromRuns(deps: SuitesFromRunsDeps) {
  async function* matchingRows(body: SuiteFromRunsInput): AsyncGenerator<RunRow> {
    const { status, started_after: after, started_before: before, run_type: runType, limit } = body.filter;
    const runs = await deps.runs.topLevelRunsOf(body.workflow_id, {
      statuses: status,
      ...(after ? { after: new Date(after) } : {}),
      ...(before ? { before: new Date(before) } : {}),
      ...(runType !== undefined ? { runType } : {}),
      limit,
    });
    for (let at = 0; at < runs.length; at += PAGE) {
      const page = runs.slice(at, at + PAGE);
      const tasksOf = await deps.runs.tasksOfMany(page.map((r) => r._id));
      for (const run of page) {
        const outputsById = Object.fromEntries(
          (tasksOf.get(run._id) ?? []).filter((t) => t.status === 'COMPLETED').map((t) => [t.node_id, t.outputs]),
        );
        const answer = outputVariableOf(outputsById, body.output_variable);
        if (answer === undefined) continue;
        const byNode = fromJsonText<Record<string, Record<string, unknown>>>(run.initial_inputs) ?? {};
        const inputs = Object.assign({}, ...Object.values(byNode)) as Record<string, unknown>;
        // Large values are stored by reference under the run: the suite keeps them whole.
        yield { runId: run._id, inputs: await deps.values.resolve(inputs), answer: await deps.values.resolve(answer) };
      }
    }
  }

  return {
    async create(body: SuiteFromRunsInput): Promise<SuiteResponse> {
      const variables = await deps.outputVariables(body.workflow_id);
      if (!variables.some((v) => v.prefixed_variable === body.output_variable))
        throw invalidField(
          'output_variable',
          `Workflow ${body.workflow_id} has no output variable '${body.output_variable}' (its variables: ${variables.map((v) => v.prefixed_variable).join(', ') || 'none'})`,
          body.output_variable,
        );
      // Checked first so a taken name costs no reading; the suite's unique index still decides races.
      const taken = await deps.suites.get(body.name).then(
        () => true,
        () => false,
      );
      if (taken) throw new ConflictError(`An eval suite named '${body.name}' exists`, 'EVAL_SUITE_EXISTS');

      const rows: RunRow[] = [];
      for await (const row of matchingRows(body)) rows.push(row);
      if (rows.length === 0)
        throw invalidField(
          'filter',
          `No run of workflow ${body.workflow_id} matching the filter recorded '${body.output_variable}'`,
          body.filter,
        );
      const inputColumns = [...new Set(rows.flatMap((r) => Object.keys(r.inputs)))];
      const answerColumn = freeColumn(ANSWER_COLUMN, inputColumns);
      const sourceColumn = freeColumn(SOURCE_COLUMN, [...inputColumns, answerColumn]);
      const lines = rows.map(
        (r) => `${JSON.stringify({ ...r.inputs, [answerColumn]: r.answer, [sourceColumn]: r.runId })}\n`,
      );
      const dataset = await deps.datasets.upload(
        {
          name: body.name,
          description: `Runs of workflow ${body.workflow_id}, newest first: ${JSON.stringify(body.filter)}`,
        },
        { originalname: 'runs.jsonl', stream: Readable.from(lines) },
      );
      try {
        return await deps.suites.create(
          {
            name: body.name,
            description: body.description,
            type: body.type,
            dataset_id: dataset.id,
            answer_column: answerColumn,
            input_columns: inputColumns,
            scorer: body.scorer,
            pauses: body.pauses,
            live_node_types: body.live_node_types,
          },
          { sourceRunColumn: sourceColumn },
        );
      } catch (err) {
        await deps.datasets.remove(dataset.id).catch(() => undefined);
        throw err;
      }
    },
  };
}

export type SuitesFromRuns = ReturnType<typeof createSuitesFromRuns>;

/** `wanted`, or `wanted_2`, `wanted_3`…: the first name no other column has. */
function freeColumn(wanted: string, taken: readonly string[]): string {
  let name = wanted;
  for (let n = 2; taken.includes(name); n++) name = `${wanted}_${n}`;
  return name;
}
