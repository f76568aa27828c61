import { pollDelays } from './poll';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type Engine, type SplitEngine, startEngine, startSplitEngine } from './engine';
import { startFakeEmbeddingsServer, type FakeEmbeddingsServer } from './fake-embeddings-server';
import type { client } from './http';
import { stack } from './stack';

type Http = ReturnType<typeof client>;

/** The api hosting its worker on their own database, task queue and vector folder, with embeddings from a local fake. */
export async function startRagEngine(
  overrides: Record<string, string> = {},
): Promise<{ engine: Engine; fake: FakeEmbeddingsServer; vectorDir: string }> {
  return startRagEngineWith(startEngine, overrides);
}

/** As startRagEngine, with the worker a process of its own (which a test may kill). */
export function startSplitRagEngine(
  overrides: Record<string, string> = {},
): Promise<{ engine: SplitEngine; fake: FakeEmbeddingsServer; vectorDir: string }> {
  return startRagEngineWith(startSplitEngine, overrides);
}

async function startRagEngineWith<E extends Engine>(
  start: (overrides: Record<string, string>) => Promise<E>,
  overrides: Record<string, string>,
): Promise<{ engine: E; fake: FakeEmbeddingsServer; vectorDir: string }> {
  const vectorDir = path.join(stack.tmpDir, `vectors-${randomBytes(4).toString('hex')}`);
  const engine = await start({ SPUR_VECTOR_STORE_URI: vectorDir, SPUR_LOG_LEVEL: 'error', ...overrides });
  const fake = await startFakeEmbeddingsServer();
  for (const [name, value] of Object.entries({ OPENAI_API_BASE: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-embed-test' })) {
    const res = await engine.http.post('/env-mgmt/', { name, value });
    if (res.status !== 200) throw new Error(`setting ${name}: ${res.status} ${res.text}`);
  }
  return { engine, fake, vectorDir };
}

export interface UploadFile {
  name: string;
  content: string | Buffer;
  type?: string;
}

export function collectionForm(metadata: Record<string, unknown>, files: UploadFile[]): FormData {
  const form = new FormData();
  form.append('metadata', JSON.stringify(metadata));
  for (const f of files)
    form.append(
      'files',
      new Blob([typeof f.content === 'string' ? f.content : new Uint8Array(f.content)], {
        type: f.type ?? 'application/octet-stream',
      }),
      f.name,
    );
  return form;
}

export function filesForm(files: UploadFile[]): FormData {
  const form = new FormData();
  for (const f of files)
    form.append(
      'files',
      new Blob([typeof f.content === 'string' ? f.content : new Uint8Array(f.content)], {
        type: f.type ?? 'application/octet-stream',
      }),
      f.name,
    );
  return form;
}

/** Polls a progress route until it leaves `processing`; a deadline, never a timing assertion. */
export async function waitForProgress(
  http: Http,
  progressPath: string,
  timeoutMs = 120_000,
): Promise<{ status: string; [k: string]: unknown }> {
  const deadline = Date.now() + timeoutMs;
  const pause = pollDelays();
  for (;;) {
    const res = await http.get(progressPath);
    if (res.status !== 200) throw new Error(`${progressPath}: ${res.status} ${res.text}`);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline)
      throw new Error(`${progressPath} still ${JSON.stringify(res.body)} after ${timeoutMs} ms`);
    await pause();
  }
}

export const INDEX_EMBEDDING = {
  model: 'openai/text-embedding-3-small',
  vector_db: 'lancedb',
  search_strategy: 'vector',
  semantic_weight: 1,
  keyword_weight: 0,
  top_k: 3,
  score_threshold: 0.05,
};

/** Small chunks in batches of two: a few short documents make several embedding requests. */
export const SMALL_CHUNKS = {
  chunk_token_size: 30,
  min_chunk_size_chars: 20,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 2,
  max_num_chunks: 1000,
  use_vision_model: false,
};
