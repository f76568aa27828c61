import { ApplicationFailure, Context } from '@temporalio/activity';
import { createDatasetReader } from '../../src/db/dataset-reader';
import type { DatasetRow } from '../../src/db/dataset-row-chunks';
import { type NewEvalResult, createEvalRecords } from '../../src/db/eval-records';
import { type EndedRowRun, type UsageSum, endedRowRuns } from '../../src/db/eval-row-runs';
import type { EvalRunDoc, EvalSuiteDoc } from '../../src/db/models';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import { asText } from '../../src/evals/answer-text';
import { outputVariableOf } from '../../src/evals/output-variable';
import { ScorerConfig } from '../../src/evals/scorer-config';
import { type Verdict, score } from '../../src/evals/scorers';
import { batchRowRunId } from '../../src/contracts/batch-contract';
import type { EvalFinish } from '../../src/contracts/eval-contract';
import { createScorerTools } from './eval-scorer-tools';
import type { NodeActivityDeps } from './execute-node.activity';
import { CANCELED_MESSAGE, isFinalStatus } from '../../src/engine/statuses';

/** How often scoring looks for rows that ended. */
const POLL_MS = 500;
/** Unscored rows looked up per pass (one `$in` read of run records). */
const LOOK_AHEAD_ROWS = 200;
/** Texts kept per example (what PySpur's page shows): model output may be long. */
const MAX_SHOWN_CHARS = 20_000;

const gone = (what: string) =>
  ApplicationFailure.nonRetryable(`${what} was deleted while the eval ran`, 'EvalInputGone');

export function createEvalActivities(deps: NodeActivityDeps) {
  const records = createEvalRecords(deps.models);
  const datasets = createDatasetReader(deps.models);
  const runs = createRunLookups(deps.models);

  return {
    async markEvalRunning(input: { evalRunId: string }): Promise<void> {
      await records.setStatus(input.evalRunId, 'RUNNING');
    },

    async finishEval(input: EvalFinish): Promise<void> {
      await records.setStatus(input.evalRunId, input.status, input.message);
    },

    /**
     * Scores every row of the eval as its run ends, until the batch has ended and every row it ran
     * is scored. Each example is stored once (eval-records.ts), so an attempt after a crash goes on
     * from the rows still unscored.
     */
    async scoreEvalRows(input: { evalRunId: string }): Promise<{ scored: number }> {
      const activity = Context.current();
      const run = await records.run(input.evalRunId);
      if (!run) throw gone(`Eval run ${input.evalRunId}`);
      const suite = await records.suite(run.suite_id);
      if (!suite) throw gone(`Eval suite ${run.suite_id}`);
      const rows = await datasets.readRows(suite.dataset_id, 0, run.num_samples).catch(() => {
        throw gone(`Dataset ${suite.dataset_id}`);
      });
      const scorer = ScorerConfig.parse(JSON.parse(suite.scorer));
      const scored = await records.scoredRows(run._id);
      for (;;) {
        activity.heartbeat();
        // The batch's state first: every row that ended before the batch did is then found below.
        const batch = await runs.endOf(run.batch_run_id);
        const batchEnded = !batch || (isFinalStatus(batch.status) && batch.end_time !== null);
        // Rows start in order, a few at a time: the ones that can have ended are among the first
        // unscored ones. Those past the window are looked at once the rows before them are scored.
        const waiting = rows
          .map((_, row) => row)
          .filter((row) => !scored.has(row))
          .slice(0, LOOK_AHEAD_ROWS);
        const ended = await endedRowRuns(
          deps.models,
          waiting.map((row) => batchRowRunId(run.batch_run_id, row)),
        );
        // In row order: a judge or a scorer with state of its own sees the rows as the dataset lists them.
        const rowOf = (rowRun: EndedRowRun) => Number(rowRun.runId.slice(run.batch_run_id.length + 1)) - 1;
        for (const rowRun of ended.sort((a, b) => rowOf(a) - rowOf(b))) {
          const row = rowOf(rowRun);
          scored.add(row);
          // A row cancelled (the eval was) gave no answer to score: it counts neither way. A row
          // declined at a pause (the suite's `pauses: decline`) is the workflow's answer: scored.
          if (rowRun.status === 'CANCELED' && rowRun.message === CANCELED_MESSAGE) continue;
          const result = await scoreRow(deps, scorer, run, suite, row, rows[row] ?? {}, rowRun);
          await records.addResults([result]);
          activity.heartbeat();
        }
        // Once the batch has ended, passes go on at once until one finds nothing more to score.
        if (batchEnded && (ended.length === 0 || scored.size === rows.length)) return { scored: scored.size };
        if (!batchEnded) await activity.sleep(POLL_MS);
      }
    },
  };
}

async function scoreRow(
  deps: NodeActivityDeps,
  scorer: ScorerConfig,
  run: EvalRunDoc,
  suite: EvalSuiteDoc,
  row: number,
  cells: DatasetRow,
  rowRun: EndedRowRun,
): Promise<NewEvalResult> {
  const tools = createScorerTools(deps, { evalRunId: run._id, workflowId: run.workflow_id, row });
  const answer = cells[suite.answer_column];
  const base = {
    eval_run_id: run._id,
    row,
    run_id: rowRun.runId,
    run_status: rowRun.status,
    prompt: shown(promptOf(suite, cells)),
  };
  const output = rowRun.status === 'COMPLETED' ? await outputOf(deps, rowRun, run.output_variable) : undefined;
  const verdict: Verdict =
    output === undefined
      ? {
          correct: false,
          predicted: '',
          expected: asText(answer).trim(),
          note:
            rowRun.status === 'COMPLETED'
              ? `The run has no output ${run.output_variable}`
              : (rowRun.message ?? rowRun.status),
        }
      : await score(scorer, { output, answer, row: cells }, tools);
  const usage = addUsage(rowRun.usage, verdict.usage ?? null);
  return {
    ...base,
    predicted: shown(verdict.predicted),
    ground_truth: shown(verdict.expected),
    correct: verdict.correct,
    note: verdict.note ? shown(verdict.note) : null,
    ...usage,
    dry_run: rowRun.dryRun.length > 0 ? JSON.stringify(rowRun.dryRun) : null,
  };
}

async function outputOf(deps: NodeActivityDeps, rowRun: EndedRowRun, variable: string): Promise<unknown> {
  const outputs = await deps.values.resolve(rowRun.outputsById);
  return outputVariableOf(outputs, variable);
}

/** What PySpur's page shows as the prompt: the input cell, or the input cells as JSON. */
function promptOf(suite: EvalSuiteDoc, cells: DatasetRow): string {
  const columns =
    suite.input_columns.length > 0 ? suite.input_columns : Object.keys(cells).filter((c) => c !== suite.answer_column);
  if (columns.length === 1) return asText(cells[columns[0] as string]);
  return JSON.stringify(Object.fromEntries(columns.map((c) => [c, cells[c] ?? null])));
}

const shown = (text: string) => (text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text);

function addUsage(a: UsageSum, b: UsageSum | null): UsageSum {
  if (!b) return a;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    cost_nano_usd: a.cost_nano_usd === null || b.cost_nano_usd === null ? null : a.cost_nano_usd + b.cost_nano_usd,
  };
}
