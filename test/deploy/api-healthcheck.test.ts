import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi } from '../support/api';
import { loadProject } from './compose-project';
import { runHealthcheck } from './healthcheck';

describe('deploy: the api health check of docker-compose.yml', function () {
  this.timeout(60_000);

  it('passes against a running api that requires API keys, and fails once it is gone', async () => {
    const hashes = hashApiKey('spur_healthcheck_key');
    const project = await loadProject({ SPUR_API_KEY_HASHES: hashes });
    const test = project.services.api?.healthcheck?.test ?? [];

    // Keys configured, as compose requires: the probe sends none, so health must stay open.
    const api = await startApi({ SPUR_API_KEY_HASHES: hashes });
    const port = new URL(api.baseUrl).port;
    try {
      assert.equal((await runHealthcheck(test, { SPUR_PORT: port })).code, 0);
    } finally {
      await api.close();
    }
    assert.equal((await runHealthcheck(test, { SPUR_PORT: port })).code, 1);
  });
});
