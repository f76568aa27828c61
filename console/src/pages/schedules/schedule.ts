import type { SCHEDULE_OVERLAPS, SCHEDULE_VERSIONS } from '../../../../src/contracts/schedule-contract';

/** A schedule as GET /api/schedules/ answers it (ScheduleResponse in the API's OpenAPI): the fields the console shows and edits. */
export interface Schedule {
  id: string;
  workflow_id: string;
  cron: string | null;
  interval_seconds: number | null;
  timezone: string;
  initial_inputs: Record<string, Record<string, unknown>>;
  overlap: (typeof SCHEDULE_OVERLAPS)[number];
  version: (typeof SCHEDULE_VERSIONS)[number];
  paused: boolean;
  note: string | null;
  next_run_times: string[];
  recent_runs: Array<{ run_id: string; scheduled_time: string | null; status: string }>;
}
