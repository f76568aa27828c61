import { parentPort } from 'node:worker_threads';
import { renderSource } from './render.js';
import type { DataObject } from './values.js';

/**
 * A render thread (see pool.ts): renders one template at a time and answers with the result.
 * It says `ready` once its modules are loaded, so a render's clock starts with the render.
 */
export interface RenderJob {
  template: string;
  context: DataObject;
}

const port = parentPort;
if (!port) throw new Error('thread.ts runs as a worker thread');
port.on('message', (job: RenderJob) => port.postMessage(renderSource(job.template, job.context)));
port.postMessage('ready');
