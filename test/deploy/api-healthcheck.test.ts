import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi } from '../support/api';
import { checkCompose, envFileFrom, readEnvExample } from './compose-project';

/** Runs a compose `CMD` health check here; `node` is this test's node, as in the image. */
function runHealthcheck(test: string[], env: Record<string, string>): Promise<number> {
  const [kind, command, ...args] = test;
  assert.equal(kind, 'CMD');
  assert.equal(command, 'node');
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 });
    child.on('exit', (code) => resolve(code ?? -1));
  });
}

describe('deploy: the api health check of docker-compose.yml', function () {
  this.timeout(60_000);

  it('passes against a running api that requires API keys, and fails once it is gone', async () => {
    const hashes = hashApiKey('spur_healthcheck_key');
    const env = envFileFrom(readEnvExample(), { SPUR_SECRET_KEY: randomBytes(32).toString('base64'), SPUR_API_KEY_HASHES: hashes, POSTGRES_PASSWORD: 'pw' });
    const loaded = await checkCompose(env);
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.error);
    const test = loaded.project.services.api?.healthcheck?.test ?? [];

    // Keys configured, as compose requires: the probe sends none, so health must stay open.
    const api = await startApi({ SPUR_API_KEY_HASHES: hashes });
    const port = new URL(api.baseUrl).port;
    try {
      assert.equal(await runHealthcheck(test, { SPUR_PORT: port }), 0);
    } finally {
      await api.close();
    }
    assert.equal(await runHealthcheck(test, { SPUR_PORT: port }), 1);
  });
});
