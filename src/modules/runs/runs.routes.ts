import { z } from '../../zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import type { BatchRuns } from '../../runs/batch-runs';
import type { ClientRuns } from '../../runs/client-runs';
import type { PartialRuns } from './partial-runs';
import type { CallbackInput } from '../callbacks/callbacks.schemas';
import { blockingAnswerOf } from './blocking-answer';
import { RunInDetail, runV2Answer } from './runv2-answer';
import { type Idempotency, IdempotencyHeaders, REPLAY_RESPONSE_HEADERS } from './idempotency';
import type { RunReader } from '../../runs/reader';
import {
  AllRunsQuery,
  BatchRunRequest,
  PartialRunRequest,
  RunIdParams,
  RunOutputsById,
  RunTypeQuery,
  StartRunRequest,
  WorkflowRunsQuery,
} from './runs.schemas';
import { RunResponse } from '../../runs/response.schemas';
import { traceParentOf } from './trace-header';

export interface RunRouteDeps {
  clientRuns: ClientRuns<CallbackInput>;
  partialRuns: PartialRuns;
  recordBatch: BatchRuns<CallbackInput>;
  reader: RunReader;
  idempotency: Idempotency;
  /** Launches a keyed run whose first request died before launching it, as the reconciler would. */
  recoverRun: (runId: string) => Promise<RunResponse>;
}

/** The run routes that take an Idempotency-Key: validated and documented alike. */
const keyedRoute = { headers: IdempotencyHeaders, responseHeaders: REPLAY_RESPONSE_HEADERS };

export function runRoutes({
  clientRuns,
  partialRuns,
  recordBatch,
  reader,
  idempotency,
  recoverRun,
}: RunRouteDeps): MountableRoute[] {
  const getRun = ({ params }: { params: { run_id: string } }) => reader.get(params.run_id);
  const blockingAnswer = blockingAnswerOf(reader);
  return [
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/{workflow_id}/run/',
      permission: 'run',
      audit: { action: 'run.start' },
      summary: 'Run and wait for the outputs (keyed by node id)',
      tags: ['runs'],
      params: WorkflowIdParams,
      query: RunTypeQuery,
      body: StartRunRequest,
      ...keyedRoute,
      response: RunOutputsById,
      errors: [400, 404, 409],
      handler: ({ params, query, body }, ctx) =>
        idempotency.keyed(ctx, {
          route: 'run',
          target: params.workflow_id,
          request: { query, body },
          perform: async (claim) =>
            blockingAnswer(
              await clientRuns.recordAndAwait('blocking', params.workflow_id, body, {
                runType: query.run_type,
                claim,
                traceParent: traceParentOf(ctx),
              }),
              ctx,
            ),
          // A replay waits for the same run and answers with its result.
          replay: async (runId) => blockingAnswer(await clientRuns.awaitOutcome(runId), ctx),
          recover: recoverRun,
        }),
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/{workflow_id}/runv2/',
      permission: 'run',
      audit: { action: 'run.start' },
      summary: 'Run and wait, answering the run (PySpur runv2)',
      description:
        "PySpur's blocking run that answers the run itself (message: how it went). At a pause, or past the blocking wait, it answers 202 with the run in `detail`; a failed run answers 500 with the run in `detail`, as PySpur does.",
      tags: ['runs'],
      params: WorkflowIdParams,
      query: RunTypeQuery,
      body: StartRunRequest,
      response: RunResponse,
      otherAnswers: {
        202: { description: 'Paused for a human, or still going past the blocking wait', schema: RunInDetail },
        500: { description: 'The run failed (PySpur answers so)', schema: RunInDetail },
      },
      errors: [400, 404, 409],
      handler: async ({ params, query, body }, ctx) => {
        const outcome = await clientRuns.recordAndAwait('blocking', params.workflow_id, body, {
          runType: query.run_type,
          traceParent: traceParentOf(ctx),
        });
        return runV2Answer(await reader.get(outcome.runId), ctx);
      },
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/{workflow_id}/start_run/',
      permission: 'run',
      audit: { action: 'run.start' },
      summary: 'Start a run and answer at once (PENDING)',
      tags: ['runs'],
      params: WorkflowIdParams,
      query: RunTypeQuery,
      body: StartRunRequest,
      ...keyedRoute,
      response: RunResponse,
      errors: [400, 404, 409],
      handler: ({ params, query, body }, ctx) =>
        idempotency.keyed(ctx, {
          route: 'start_run',
          target: params.workflow_id,
          request: { query, body },
          perform: (claim) =>
            clientRuns.recordAndLaunch('start_run', params.workflow_id, body, {
              runType: query.run_type,
              claim,
              traceParent: traceParentOf(ctx),
            }),
          recover: recoverRun,
        }),
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/{workflow_id}/start_batch_run/',
      permission: 'run',
      audit: { action: 'run.start_batch' },
      summary: 'Run every row of a dataset (a batch parent run, answered at once)',
      tags: ['runs'],
      params: WorkflowIdParams,
      body: BatchRunRequest,
      ...keyedRoute,
      response: RunResponse,
      errors: [400, 404, 409],
      handler: ({ params, body }, ctx) =>
        idempotency.keyed(ctx, {
          route: 'start_batch_run',
          target: params.workflow_id,
          request: body,
          perform: (claim) => recordBatch(params.workflow_id, body, claim, traceParentOf(ctx)),
          recover: recoverRun,
        }),
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/wf/{workflow_id}/run_partial/',
      permission: 'run',
      audit: { action: 'run.start_partial' },
      summary: 'Compute one node (and what it needs); no run record',
      tags: ['runs'],
      params: WorkflowIdParams,
      body: PartialRunRequest,
      response: RunOutputsById,
      errors: [400, 404, 409],
      handler: async ({ params, body }, ctx) => {
        const scope = partialRuns.newPartialScope();
        // Its values are needed until the response (streamed) has been sent.
        ctx.res.once('close', () => void partialRuns.dropPartial(scope).catch(() => undefined));
        return partialRuns.runPartial(params.workflow_id, body, scope);
      },
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/wf/{workflow_id}/runs/',
      summary: "A workflow's runs, newest first",
      tags: ['runs'],
      params: WorkflowIdParams,
      query: WorkflowRunsQuery,
      response: z.array(RunResponse),
      handler: ({ params, query }) =>
        reader.list(
          {
            workflowId: params.workflow_id,
            ...(query.status ? { status: query.status } : {}),
            ...(query.start_date ? { startFrom: new Date(query.start_date) } : {}),
            ...(query.end_date ? { startTo: new Date(query.end_date) } : {}),
          },
          query,
        ),
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/run/',
      summary: 'All runs, newest first',
      tags: ['runs'],
      query: AllRunsQuery,
      response: z.array(RunResponse),
      handler: ({ query }) =>
        reader.list(
          {
            parentOnly: query.parent_only,
            ...(query.run_type !== undefined ? { runType: query.run_type } : {}),
            ...(query.workflow_id !== undefined ? { workflowId: query.workflow_id } : {}),
            ...(query.status ? { status: query.status } : {}),
            ...(query.trigger ? { trigger: query.trigger } : {}),
            ...(query.start_date ? { startFrom: new Date(query.start_date) } : {}),
            ...(query.end_date ? { startTo: new Date(query.end_date) } : {}),
          },
          query,
        ),
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/run/{run_id}/',
      summary: 'A run with its tasks',
      tags: ['runs'],
      params: RunIdParams,
      response: RunResponse,
      errors: [404],
      handler: getRun,
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/run/{run_id}/status/',
      summary: "A run's status (poll this)",
      tags: ['runs'],
      params: RunIdParams,
      response: RunResponse,
      errors: [404],
      handler: getRun,
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/runs/{run_id}/status/',
      summary: 'Alias from the deployment guide',
      tags: ['runs'],
      params: RunIdParams,
      response: RunResponse,
      errors: [404],
      handler: getRun,
    }),
  ];
}
