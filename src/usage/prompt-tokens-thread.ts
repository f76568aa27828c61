import { getEncoding } from 'js-tiktoken';
import { serveJobs } from '../threads/serve-jobs';
import { countInSlices } from './token-slices';

type Encoding = ReturnType<typeof getEncoding>;
let o200k: Encoding | undefined;

/** The thread side of prompt-tokens.ts: the encoder is built once, before the first job. */
serveJobs<string, number>(
  (text) => countInSlices(text, (slice) => (o200k ??= getEncoding('o200k_base')).encode(slice).length),
  async () => {
    o200k ??= getEncoding('o200k_base');
  },
);
