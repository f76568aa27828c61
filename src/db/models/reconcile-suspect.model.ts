import { Schema, type InferSchemaType } from 'mongoose';

/**
 * An open run whose Temporal workflow the reconciler found missing (`_id`: the run's id), and
 * since when. A server recovering its persistence can answer "not found" for a workflow that
 * exists: the run is failed only if it is still missing a grace period later.
 */
export const reconcileSuspectSchema = new Schema(
  {
    _id: { type: String, required: true },
    missing_since: { type: Date, required: true },
  },
  { collection: 'reconcile_suspects', versionKey: false },
);

export type ReconcileSuspectDoc = InferSchemaType<typeof reconcileSuspectSchema> & { _id: string };
