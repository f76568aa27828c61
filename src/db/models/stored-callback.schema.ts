import { Schema } from 'mongoose';

/**
 * A callback as a run, schedule or webhook trigger keeps it (StoredCallback): where events are
 * posted, which ones, and the signing secret sealed (AES-256-GCM, the installation's key).
 */
export const storedCallbackField = {
  type: new Schema(
    {
      url: { type: String, required: true },
      events: { type: [String], required: true },
      secret: { type: String, required: true },
    },
    { _id: false },
  ),
  default: null,
};
