import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One event of a run's stream, `_id` `<runId>:<seq>` so a reader finds the next one with an `_id`
 * lookup (the only filter FerretDB v1 pushes down). `data` is JSON text (user keys may hold `.`/`$`).
 */
export const runEventSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    seq: { type: Number, required: true },
    event: { type: String, required: true },
    data: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'run_events', versionKey: false },
);
runEventSchema.index({ run_id: 1, seq: 1 }, { unique: true });

/** What a run's stream has said so far (`_id` = run id, `head` JSON text of EventHead): written after its events. */
export const runEventHeadSchema = new Schema(
  {
    _id: { type: String, required: true },
    head: { type: String, required: true },
  },
  { collection: 'run_event_heads', versionKey: false },
);

export type RunEventDoc = InferSchemaType<typeof runEventSchema> & { _id: string };
export type RunEventHeadDoc = InferSchemaType<typeof runEventHeadSchema> & { _id: string };
