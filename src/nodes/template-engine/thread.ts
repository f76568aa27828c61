import { serveJobs } from '../../threads/serve-jobs.js';
import { type RenderResult, renderSource } from './render.js';
import type { DataObject } from './values.js';
import type { CallbackUrls } from './callback-url.js';

/** A render thread (see pool.ts): renders one template at a time and answers with the result. */
export interface RenderJob {
  template: string;
  context: DataObject;
  /** Set when the template calls `callback_url(…)`. */
  callbacks?: CallbackUrls;
}

serveJobs<RenderJob, RenderResult>((job) => renderSource(job.template, job.context, job.callbacks));
