import type { RagProgressDoc } from '../db/models/rag-collection.model';
import type { ProgressResponse } from './schemas';

type ProgressFields = Omit<RagProgressDoc, 'created_at' | 'updated_at'>;

/** A job's progress as it starts: nothing processed yet. */
export function startingProgress(
  now: Date,
  totals: { files: number; chunks: number },
  step = 'initializing',
): RagProgressDoc {
  return {
    status: 'processing',
    progress: 0,
    current_step: step,
    total_files: totals.files,
    processed_files: 0,
    total_chunks: totals.chunks,
    processed_chunks: 0,
    error_message: null,
    created_at: now,
    updated_at: now,
  };
}

/** `$set` of the given progress fields (the job's `created_at` stays). */
export function progressUpdate(fields: Partial<ProgressFields>, now = new Date()): Record<string, unknown> {
  const set: Record<string, unknown> = { 'progress.updated_at': now };
  for (const [key, value] of Object.entries(fields)) set[`progress.${key}`] = value;
  return set;
}

export function toProgressResponse(id: string, p: RagProgressDoc): ProgressResponse {
  return {
    id,
    status: p.status as ProgressResponse['status'],
    progress: Math.min(1, Math.max(0, p.progress ?? 0)),
    current_step: p.current_step ?? 'initializing',
    total_files: p.total_files ?? 0,
    processed_files: p.processed_files ?? 0,
    total_chunks: p.total_chunks ?? 0,
    processed_chunks: p.processed_chunks ?? 0,
    error_message: p.error_message ?? null,
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
  };
}
