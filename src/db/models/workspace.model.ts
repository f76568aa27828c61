import { Schema, type InferSchemaType } from 'mongoose';

/** A team's share of the installation (`/api/access/workspaces/`): `default`, or `WS<n>`. */
export const workspaceSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Numeric part of the id; 0 for `default`, which every installation has. */
    seq: { type: Number, required: true },
    name: { type: String, required: true, unique: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'workspaces', versionKey: false },
);

export type WorkspaceDoc = InferSchemaType<typeof workspaceSchema> & { _id: string };
