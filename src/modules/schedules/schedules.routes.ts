import { defineRoute, type MountableRoute } from '../../http/route';
import { RunResponse } from '../../runs/response.schemas';
import { z } from '../../zod';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import {
  BackfillRequest,
  BackfillResponse,
  ScheduleIdParams,
  ScheduleListQuery,
  ScheduleRequest,
  ScheduleResponse,
  ScheduleUpdateRequest,
} from './schedules.schemas';
import type { ScheduleService } from './schedules.service';

const tags = ['schedules'];

/** Schedules (beyond PySpur): each a Temporal Schedule whose fires record and run a run of the workflow. */
export function scheduleRoutes(schedules: ScheduleService): MountableRoute[] {
  const byId = (path: string, method: 'post', summary: string, paused: boolean) =>
    defineRoute({
      method,
      path,
      permission: 'run',
      summary,
      tags,
      params: ScheduleIdParams,
      response: ScheduleResponse,
      errors: [404],
      handler: ({ params }) => schedules.setPaused(params.schedule_id, paused),
    });
  return [
    defineRoute({
      method: 'post',
      path: '/wf/{workflow_id}/schedules/',
      permission: 'build',
      summary: 'Schedule runs of a workflow (cron or interval)',
      tags,
      params: WorkflowIdParams,
      body: ScheduleRequest,
      response: ScheduleResponse,
      errors: [400, 404],
      handler: ({ params, body }) => schedules.create(params.workflow_id, body),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/schedules/',
      summary: "A workflow's schedules",
      tags,
      params: WorkflowIdParams,
      query: ScheduleListQuery.omit({ workflow_id: true }),
      response: z.array(ScheduleResponse),
      errors: [404],
      handler: ({ params, query }) => schedules.list(query, params.workflow_id),
    }),
    defineRoute({
      method: 'get',
      path: '/schedules/',
      summary: 'All schedules, oldest first (optionally of one workflow)',
      tags,
      query: ScheduleListQuery,
      response: z.array(ScheduleResponse),
      errors: [404],
      handler: ({ query }) => schedules.list(query, query.workflow_id),
    }),
    defineRoute({
      method: 'get',
      path: '/schedules/{schedule_id}/',
      summary: 'A schedule, its next fire times and latest runs',
      tags,
      params: ScheduleIdParams,
      response: ScheduleResponse,
      errors: [404],
      handler: ({ params }) => schedules.get(params.schedule_id),
    }),
    defineRoute({
      method: 'put',
      path: '/schedules/{schedule_id}/',
      permission: 'build',
      summary: 'Change a schedule (the fields given)',
      tags,
      params: ScheduleIdParams,
      body: ScheduleUpdateRequest,
      response: ScheduleResponse,
      errors: [400, 404],
      handler: ({ params, body }) => schedules.update(params.schedule_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/schedules/{schedule_id}/',
      permission: 'build',
      summary: 'Delete a schedule: nothing fires after the answer (runs it started go on)',
      tags,
      params: ScheduleIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await schedules.remove(params.schedule_id);
      },
    }),
    byId('/schedules/{schedule_id}/pause/', 'post', 'Pause a schedule', true),
    byId('/schedules/{schedule_id}/unpause/', 'post', 'Unpause a schedule', false),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/schedules/{schedule_id}/trigger/',
      permission: 'run',
      summary: "One run now with the schedule's inputs, answered as start_run answers",
      tags,
      params: ScheduleIdParams,
      response: RunResponse,
      errors: [404, 409],
      handler: ({ params }) => schedules.trigger(params.schedule_id),
    }),
    defineRoute({
      method: 'post',
      path: '/schedules/{schedule_id}/backfill/',
      permission: 'run',
      summary: 'Runs for every fire time in a past range, under the overlap policy',
      tags,
      params: ScheduleIdParams,
      body: BackfillRequest,
      status: 202,
      response: BackfillResponse,
      errors: [400, 404],
      handler: ({ params, body }) => schedules.backfill(params.schedule_id, body),
    }),
  ];
}
