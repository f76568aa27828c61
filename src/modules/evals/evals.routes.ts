import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import {
  CompareRequest,
  CompareResponse,
  ComparisonIdParams,
  EvalCard,
  EvalRunIdParams,
  EvalRunResponse,
  LaunchRequest,
  SuiteIdParams,
  SuiteFromRunsRequest,
  SuiteRequest,
  SuiteResponse,
} from './evals.schemas';
import type { EvalService } from './evals.service';
import type { SuiteService } from './suites.service';
import type { SuitesFromRuns } from './suites-from-runs';

const tags = ['evals'];

/**
 * Evals: suites (a dataset, its answer column and a scorer), runs that score a workflow on a suite
 * (PySpur's `/evals/` shapes, so its Evals page works) and comparisons of two workflow versions.
 */
export function evalRoutes(suites: SuiteService, evals: EvalService, fromRuns: SuitesFromRuns): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/evals/suites/from_runs/',
      permission: 'build',
      audit: { action: 'eval_suite.create_from_runs' },
      summary: "A regression suite from a workflow's runs: their inputs, and the output each recorded as the answer",
      tags,
      body: SuiteFromRunsRequest,
      response: SuiteResponse,
      errors: [404, 409, 413],
      handler: ({ body }) => fromRuns.create(body),
    }),
    defineRoute({
      method: 'post',
      path: '/evals/suites/',
      permission: 'build',
      summary: 'Create an eval suite over a stored dataset',
      tags,
      body: SuiteRequest,
      response: SuiteResponse,
      errors: [404, 409],
      handler: ({ body }) => suites.create(body),
    }),
    defineRoute({
      method: 'get',
      path: '/evals/suites/',
      summary: 'Eval suites, oldest first',
      tags,
      response: z.array(SuiteResponse),
      handler: () => suites.list(),
    }),
    defineRoute({
      method: 'get',
      path: '/evals/suites/{suite_id}/',
      summary: 'An eval suite (by id or name)',
      tags,
      params: SuiteIdParams,
      response: SuiteResponse,
      errors: [404],
      handler: async ({ params }) => suites.toResponse(await suites.get(params.suite_id)),
    }),
    defineRoute({
      method: 'delete',
      path: '/evals/suites/{suite_id}/',
      permission: 'build',
      summary: 'Delete an eval suite (its runs and their results stay)',
      tags,
      params: SuiteIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await suites.remove(params.suite_id);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/evals/',
      summary: "Eval suites as PySpur's Evals page lists them",
      tags,
      response: z.array(EvalCard),
      handler: () => suites.cards(),
    }),
    defineRoute({
      method: 'post',
      path: '/evals/launch/',
      permission: 'build',
      summary: "Run a suite on a workflow's current version: a durable batch, each row scored as it ends",
      tags,
      body: LaunchRequest,
      response: EvalRunResponse,
      errors: [400, 404, 409],
      handler: ({ body }) => evals.launch(body),
    }),
    defineRoute({
      method: 'get',
      path: '/evals/runs/',
      summary: 'Eval runs, newest first',
      tags,
      response: z.array(EvalRunResponse),
      handler: () => evals.list(),
    }),
    defineRoute({
      method: 'get',
      path: '/evals/runs/{eval_run_id}',
      summary: 'An eval run with its accuracy, examples, tokens and cost',
      tags,
      params: EvalRunIdParams,
      response: EvalRunResponse,
      errors: [404],
      handler: ({ params }) => evals.get(params.eval_run_id),
    }),
    defineRoute({
      method: 'post',
      path: '/evals/runs/{eval_run_id}/cancel/',
      permission: 'build',
      summary: 'Cancel an eval run (rows that ended keep their scores)',
      tags,
      params: EvalRunIdParams,
      response: EvalRunResponse,
      errors: [404],
      handler: ({ params }) => evals.cancel(params.eval_run_id),
    }),
    defineRoute({
      method: 'post',
      path: '/evals/compare/',
      permission: 'build',
      summary: 'Run two versions of a workflow on the same rows of a suite',
      description:
        'Answers at once (202) with the comparison as it stands; GET it until its status is COMPLETED for the final delta and interval.',
      tags,
      body: CompareRequest,
      status: 202,
      response: CompareResponse,
      errors: [400, 404, 409],
      handler: ({ body }) => evals.compare(body),
    }),
    defineRoute({
      method: 'get',
      path: '/evals/compare/{comparison_id}/',
      summary: 'A comparison: accuracy delta (B − A) with its 95 % interval, and the examples that differ',
      tags,
      params: ComparisonIdParams,
      response: CompareResponse,
      errors: [404],
      handler: ({ params }) => evals.comparison(params.comparison_id),
    }),
  ];
}
