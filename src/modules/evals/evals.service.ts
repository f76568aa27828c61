import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { EvalRecords } from '../../db/eval-records';
import type { Models, WorkflowVersionDoc } from '../../db/models';
import { notFound } from '../../errors';
import { evalWorkflowId } from '../../contracts/workflow-names';
import type { WorkflowService } from '../workflows/workflows.service';
import type { VersionService } from '../workflows/versions.service';
import { evalNotFound } from './eval-errors';
import type { EvalRecorder, RecordedEval } from './eval-recorder';
import { comparisonOf, toEvalRunResponse } from './eval-results';
import type { CompareInput, CompareResponse, EvalRunResponse, LaunchInput } from './evals.schemas';
import { soleOutputVariable } from './sole-output-variable';
import type { SuiteService } from './suites.service';

export interface EvalServiceDeps {
  models: Models;
  records: EvalRecords;
  suites: SuiteService;
  workflows: WorkflowService;
  versions: VersionService;
  recorder: EvalRecorder;
  temporal: Client;
  workflowIdPrefix: string;
}

/** Eval runs and comparisons: launched, read in PySpur's shapes, cancelled. */
export function createEvalService(deps: EvalServiceDeps) {
  const { records } = deps;

  async function versionOf(workflowId: string, version: number): Promise<WorkflowVersionDoc> {
    const doc = await deps.models.WorkflowVersion.findOne({
      workflow_id: workflowId,
      version,
    }).lean<WorkflowVersionDoc>();
    if (!doc) throw evalNotFound.version(workflowId, version);
    return doc;
  }

  async function runWithResults(id: string) {
    const run = await records.run(id);
    if (!run) throw evalNotFound.run(id);
    return { run, results: await records.results(id) };
  }

  async function comparison(id: string): Promise<CompareResponse> {
    const doc = await records.comparison(id);
    const [idA, idB] = doc?.eval_run_ids ?? [];
    if (!doc || idA === undefined || idB === undefined) throw evalNotFound.comparison(id);
    const [a, b] = await Promise.all([runWithResults(idA), runWithResults(idB)]);
    const versions: [number, number] = [doc.versions[0] ?? 0, doc.versions[1] ?? 0];
    return comparisonOf({ id: doc._id, suite_id: doc.suite_id, workflow_id: doc.workflow_id, versions }, a, b);
  }

  /** Launches recorded evals in turn; once one cannot start, the ones after it are failed rather than left to start later. */
  async function launchAll(recorded: RecordedEval[]): Promise<void> {
    for (const [i, one] of recorded.entries()) {
      try {
        await deps.recorder.launch(one);
      } catch (err) {
        for (const rest of recorded.slice(i + 1))
          await deps.recorder.abandon(
            rest,
            `Not started: the other run of its comparison could not start (${(err as Error).message})`,
          );
        throw err;
      }
    }
  }

  return {
    async launch(body: LaunchInput): Promise<EvalRunResponse> {
      const suite = await deps.suites.get(body.eval_name);
      const workflow = await deps.workflows.load(body.workflow_id);
      const version = await deps.versions.ensureVersion(workflow);
      const run = await deps.recorder.recordAndLaunch({
        suite,
        version,
        outputVariable: body.output_variable,
        numSamples: body.num_samples,
        concurrency: body.concurrency,
        llmMode: body.llm_mode,
      });
      return toEvalRunResponse(run);
    },

    list: async () => (await records.runs()).map((run) => toEvalRunResponse(run)),

    async get(id: string): Promise<EvalRunResponse> {
      const { run, results } = await runWithResults(id);
      return toEvalRunResponse(run, results);
    },

    /** Cancels the eval's workflow (its batch and rows with it); the rows that ended keep their scores. */
    async cancel(id: string): Promise<EvalRunResponse> {
      const run = await records.run(id);
      if (!run) throw evalNotFound.run(id);
      try {
        await deps.temporal.workflow.getHandle(evalWorkflowId(id, deps.workflowIdPrefix)).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      return toEvalRunResponse(run);
    },

    /** Both versions are checked before either run starts; then both run over the same first rows. */
    async compare(body: CompareInput): Promise<CompareResponse> {
      const suite = await deps.suites.get(body.suite);
      if (!(await deps.workflows.exists(body.workflow_id))) throw notFound.workflow();
      const versions: WorkflowVersionDoc[] = [];
      for (const v of body.versions) versions.push(await versionOf(body.workflow_id, v));
      const outputVariable = body.output_variable ?? soleOutputVariable(versions);
      const starts = versions.map((version) => ({
        suite,
        version,
        outputVariable,
        numSamples: body.num_samples,
        concurrency: body.concurrency,
        llmMode: body.llm_mode,
      }));
      for (const start of starts) await deps.recorder.check(start);
      const created = await records.createComparison({
        suite_id: suite._id,
        workflow_id: body.workflow_id,
        versions: body.versions,
        eval_run_ids: [],
      });
      // Both runs and the comparison's hold on them are written before either starts: a crash
      // after this leaves two recorded evals the reconciler starts, never an orphan run.
      const recorded = [];
      for (const start of starts) recorded.push(await deps.recorder.record({ ...start, comparisonId: created._id }));
      await records.setComparisonRuns(
        created._id,
        recorded.map((r) => r.run._id),
      );
      await launchAll(recorded);
      return comparison(created._id);
    },

    comparison,
  };
}

export type EvalService = ReturnType<typeof createEvalService>;
