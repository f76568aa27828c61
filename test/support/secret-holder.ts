import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startApi, type TestApi } from './api';
import { client } from './http';
import { stack } from './stack';
import { startWorker, type TestWorker } from './worker';

/**
 * An api and a worker process holding secrets user code must never read: a marker in the worker's
 * environment and in SPUR_DATA_DIR/secret.key, beside the secret key and the database address
 * every worker has.
 */
export interface SecretHolder {
  api: TestApi;
  worker: TestWorker;
  http: ReturnType<typeof client>;
  marker: string;
  dataDir: string;
  /** Fails when `text` holds the marker, the secret key or the database address. */
  assertNoSecret(text: string, what: string): void;
  stop(): Promise<void>;
}

export async function startSecretHolder(): Promise<SecretHolder> {
  const marker = `spur-marker-${randomBytes(8).toString('hex')}`;
  const dataDir = path.join(stack.tmpDir, `data-${randomBytes(4).toString('hex')}`);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.join(dataDir, 'secret.key'), `${marker}-key`);
  const api = await startApi({ SPUR_DATA_DIR: dataDir });
  const worker = await startWorker(api.env, { SPUR_TEST_MARKER: marker });
  return {
    api,
    worker,
    http: client(api.baseUrl),
    marker,
    dataDir,
    assertNoSecret(text, what) {
      assert.ok(!text.includes(marker), `${what}: the marker leaked`);
      assert.ok(!text.includes(api.env.SPUR_SECRET_KEY as string), `${what}: the secret key leaked`);
      assert.ok(!text.includes(api.env.SPUR_MONGODB_URI as string), `${what}: the database address leaked`);
    },
    async stop() {
      await worker.stop();
      await api.close();
    },
  };
}

/** Python helpers for user code that looks around: a file's text and a folder's names, or "ERR <exception>". */
export const PY_LOOKERS = `
def grab(p):
    try:
        with open(p, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except Exception as e:
        return "ERR " + type(e).__name__
def listing(p):
    try:
        return " ".join(os.listdir(p))
    except Exception as e:
        return "ERR " + type(e).__name__
`;
