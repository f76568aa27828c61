/**
 * The events of a run's stream (GET /api/run/{id}/events/), in the order they may appear. A module
 * of its own, importing nothing: the console bundles it to follow a run's stream.
 */
export const RUN_EVENT_NAMES = [
  'run.status',
  'task.started',
  'task.waiting',
  'task.completed',
  'task.failed',
  'run.paused',
  'run.resumed',
  'pause.notification',
  'batch.stage',
  'batch.progress',
  'run.completed',
  'run.failed',
  'run.canceled',
] as const;
export type RunEventName = (typeof RUN_EVENT_NAMES)[number];
