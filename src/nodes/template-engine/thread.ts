import { serveJobs } from '../../threads/serve-jobs.js';
import { type RenderResult, renderSource } from './render.js';
import type { DataObject } from './values.js';

/** A render thread (see pool.ts): renders one template at a time and answers with the result. */
export interface RenderJob {
  template: string;
  context: DataObject;
}

serveJobs<RenderJob, RenderResult>((job) => renderSource(job.template, job.context));
