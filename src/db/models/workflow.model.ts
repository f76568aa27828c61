import { Schema, type InferSchemaType } from 'mongoose';

export const workflowSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Numeric part of the id: breaks ties between workflows created in the same millisecond. */
    seq: { type: Number, required: true },
    name: { type: String, required: true, unique: true },
    description: { type: String, default: null },
    /** The definition as JSON text (see db/json-text.ts). */
    definition: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'workflows', versionKey: false },
);

export type WorkflowDoc = InferSchemaType<typeof workflowSchema> & { _id: string };
