import { z } from '../../zod';
import { APPROVAL_CHANNELS } from '../../engine/approvals';
import { PAUSE_ACTIONS, RUN_STATUSES } from '../../engine/statuses';
import { WAIT_REASONS } from '../../engine/run-contract';

/** `?after=N`: replay the events after sequence number N (the `Last-Event-ID` header wins when both are sent). */
export const RunEventsQuery = z.object({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: 'Replay every event after this sequence number (like the Last-Event-ID header)' }),
});

const task = { run_id: z.string(), node_id: z.string(), task_id: z.string() };
const runStatus = z.enum(RUN_STATUSES);
const ended = z.object({
  run_id: z.string(),
  status: runStatus,
  message: z.string().nullable(),
  percentage_complete: z.number(),
});

/** Every event's `data`, by event name: one schema per shape (tests parse what the stream sends with these). */
export const RUN_EVENT_DATA = {
  'run.status': z.object({
    run_id: z.string(),
    status: runStatus,
    percentage_complete: z.number(),
    message: z.string().nullable(),
  }),
  'task.started': z.object({ ...task, start_time: z.string().nullable() }),
  'task.waiting': z.object({
    ...task,
    limit_key: z.string().optional().openapi({
      description:
        'The fleet-wide limit (GET /api/limits/) whose slot the node waits for (reasons `limit`, `breaker_open`)',
    }),
    until: z.string().nullable().optional().openapi({
      description: "A WaitNode's wake-up time, or a WaitForCallbackNode's deadline (reasons `timer`, `callback`)",
    }),
    reason: z.enum(WAIT_REASONS).openapi({
      description:
        "`limit`: for a slot of the limit; `breaker_open`: for the limit's open breaker to close (docs/runs.md#breaker); `timer`: a WaitNode's timer; `callback`: a WaitForCallbackNode's callback (docs/integrations.md)",
    }),
  }),
  'task.completed': z.object({
    ...task,
    end_time: z.string().nullable(),
    outputs: z.record(z.string(), z.unknown()).nullable().openapi({
      description: 'The outputs, or null when larger than 16 KiB (then read the task from GET /api/run/{run_id}/)',
    }),
    outputs_by_reference: z.boolean(),
    outputs_bytes: z.number().int().optional(),
  }),
  'task.failed': z.object({ ...task, end_time: z.string().nullable(), error: z.string().nullable() }),
  'run.paused': z.object({
    run_id: z.string(),
    pause: z.object({
      id: z.string(),
      node_id: z.string(),
      pause_message: z.string(),
      pause_time: z.string(),
      input_data: z.unknown().openapi({ description: "null when larger than 16 KiB (see the run's pauses)" }),
    }),
  }),
  'run.resumed': z.object({
    run_id: z.string(),
    pause_id: z.string(),
    resume_action: z.enum(PAUSE_ACTIONS),
    resume_user_id: z.string(),
    comments: z.string().nullable(),
    resume_time: z.string(),
  }),
  'pause.notification': z
    .object({
      run_id: z.string(),
      pause_id: z.string(),
      delivery_id: z.string(),
      notice: z.enum(['notify', 'remind', 'escalate']),
      channel: z.enum(APPROVAL_CHANNELS),
      to: z.string(),
      user_id: z.string(),
      status: z.enum(['sent', 'failed']),
      error: z.string().nullable(),
    })
    .openapi({ description: 'A message with an approval link was sent, or given up (docs/approvals.md)' }),
  'batch.stage': z
    .object({
      run_id: z.string(),
      round: z.number().int(),
      node_id: z.string(),
      provider: z.string(),
      batch_id: z.string(),
      status: z.string(),
      requests: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
    })
    .openapi({
      description:
        "A provider-batch run's provider batch was sent (`submitted`) or changed state (the provider's word): docs/batch-mode.md",
    }),
  'batch.progress': z.object({
    run_id: z.string(),
    rows_total: z.number().int(),
    rows_done: z.number().int(),
    rows_failed: z.number().int(),
  }),
  'run.completed': ended,
  'run.failed': ended,
  'run.canceled': ended,
} as const;

/** `task.delta`: a piece of the text an LLM node is streaming from its provider; live only, not stored, no `id`. */
export const TaskDeltaData = z.object({
  node_id: z.string(),
  text: z.string().openapi({
    description: "The next piece of the model's reply text (as the provider sent it: JSON text for a JSON-mode call)",
  }),
});

const durableEvents = Object.entries(RUN_EVENT_DATA).map(([name, data]) =>
  z.object({ id: z.number().int().min(1), event: z.literal(name), data }),
);
const taskDelta = z.object({ event: z.literal('task.delta'), data: TaskDeltaData }).openapi({
  description:
    "Sent without `id:` (Last-Event-ID is not moved by it) and never replayed: a client that connects later gets the task's output in task.completed.",
});

/** The stream as OpenAPI shows it: each SSE message is `id: <seq>`, `event: <name>`, `data: <JSON>` (task.delta without `id`). */
export const RunStreamEvent = z
  .union([...durableEvents, taskDelta] as unknown as [z.ZodObject, z.ZodObject, ...z.ZodObject[]])
  .openapi('RunStreamEvent', {
    description:
      "One server-sent event: `id:` its sequence number in the run, `event:` its name, `data:` the JSON shown here. The stream ends after run.completed, run.failed or run.canceled; comment lines (`: keep-alive`) come every 15 s. `task.delta` events (an LLM node's reply as it streams) have no `id:` and are not stored.",
  });
