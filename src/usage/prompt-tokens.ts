import path from 'node:path';
import { ThreadPool } from '../threads/thread-pool';

/** A count that takes longer than this (a prompt of megabytes) gives way to the estimate below. */
const COUNT_TIME_LIMIT_MS = 5000;

const pool = new ThreadPool<string, number | null>({
  name: 'prompt token count',
  module: path.join(__dirname, `prompt-tokens-thread${path.extname(__filename)}`),
  threads: 1,
  memoryMb: 256,
  stopAfterMs: COUNT_TIME_LIMIT_MS,
  stopped: () => null,
});

/**
 * A prompt's tokens as OpenAI's current models count them (o200k_base; other providers' counts
 * differ by a few percent), on a thread of its own: building the encoder takes a CPU-second and a
 * hostile prompt may take more to count, neither on the worker's event loop. A count that runs out
 * of time answers one token per UTF-8 byte, more than any prompt has.
 */
export async function promptTokens(text: string): Promise<number> {
  return (await pool.run(text)) ?? Buffer.byteLength(text, 'utf8');
}
