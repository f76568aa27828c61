/** What a fire does while the schedule's previous run goes on (Temporal's overlap policies). */
export const SCHEDULE_OVERLAPS = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;
/** Which version of the workflow a fire runs: the latest, or the one saved with the schedule. */
export const SCHEDULE_VERSIONS = ['latest', 'pinned'] as const;

/** The Temporal Schedule of a Spur schedule (`SC<n>`), behind the installation's prefix. */
export const scheduleTemporalId = (scheduleId: string, prefix = '') => `${prefix}schedule-${scheduleId}`;

/** Its fires' workflow ids: Temporal appends each fire's time to this. */
export const scheduleFireWorkflowId = (scheduleId: string, prefix = '') => `${prefix}scheduled-${scheduleId}`;

/** A fire's workflow input: everything else it reads from the schedule's document when it fires. */
export interface ScheduledRunInput {
  scheduleId: string;
}

export interface RecordScheduledRunInput {
  scheduleId: string;
  /** ISO date-time: the fire's nominal time (Temporal's TemporalScheduledStartTime). */
  scheduledTime: string;
  /** The fire's workflow id, unique per fire: its run is recorded once, however often this is retried. */
  fireKey: string;
}

/** A recorded run's workflow, started by another workflow as its child (a schedule's fire, a parent run). */
export interface ChildRunStart {
  kind: 'start';
  runId: string;
  workflowType: string;
  workflowId: string;
  args: unknown[];
  summary: string;
  /** The run's search attributes, as the launcher sets them. */
  spurWorkflowId: string;
  runType: string;
  /** SpurStartedBy: its trigger (`schedule:SC4`, `subworkflow:R5`). */
  startedBy?: string | null;
  /** SpurRunStatus at the start (absent in plans made before runs were listed RUNNING from it: PENDING). */
  listedAs?: string;
}

/** What the fire starts: its run's workflow, as a child it waits for (so overlap policies see the run), or nothing. */
export type ScheduledRunPlan = ChildRunStart | { kind: 'none'; runId: string | null; reason: string };
