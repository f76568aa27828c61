import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports';
import { type FerretDbServer, startFerretDb } from '../../scripts/lib/servers';
import { approvalTokens } from '../../src/approvals/approval-token';
import { startApi, type TestApi } from '../support/api';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { until } from '../support/exec-log';
import { stack } from '../support/stack';

// An approval link's token is its credential, as a webhook's is: whoever reads it may decide the
// pause. The api logs the path of every request it answers 5xx, so that path must not carry it.

describe('security: approval tokens stay out of the logs', function () {
  this.timeout(180_000);
  let ferret: FerretDbServer | undefined;
  let api: TestApi | undefined;
  let apiProcess: ApiProcess | undefined;
  after(async () => {
    apiProcess?.process.kill('SIGKILL');
    await api?.close();
    await ferret?.handle.stop();
  });

  it('a 503 on /approve/{token} (MongoDB down) is logged with the path, its token replaced', async () => {
    ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(stack.tmpDir, `ferret-approval-logs-${Date.now()}`),
      logFile: path.join(stack.tmpDir, 'ferret-approval-logs.log'),
    });
    // The in-process api prepares the database; the api process is the one whose log is read.
    api = await startApi({ SPUR_MONGODB_URI: ferret.uri, SPUR_MONGODB_TIMEOUT_MS: '2000' });
    const proc = await startApiProcess({ ...api.env, SPUR_MONGODB_TIMEOUT_MS: '2000' });
    apiProcess = proc;
    const origin = proc.baseUrl.replace(/\/api$/, '');
    // A token the api accepts (signed with its key, not expired): only then does it read the pause.
    const token = approvalTokens(Buffer.from(api.env.SPUR_SECRET_KEY as string, 'base64')).mint({
      runId: 'R-approval-logs',
      pauseId: 'P-approval-logs',
      userId: 'ops@example.com',
      channel: 'email',
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    });
    const page = await fetch(`${origin}/approve/${token}`);
    assert.equal(page.status, 410, 'with MongoDB up the signed token reaches the pause lookup');

    ferret.handle.kill('SIGKILL');
    await ferret.handle.exited;
    await until(
      'the api process to report the database down',
      async () => (await proc.http.get('/health/')).status === 503,
    );
    const down = await fetch(`${origin}/approve/${token}`);
    assert.equal(down.status, 503);

    // The line is written after the answer: wait for it, then read the whole log.
    const logFile = proc.logFile;
    const logged503 = () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes('request answered 503') && line.includes('"path":"/approve/'));
    await until('the 503 on the link route to be logged', () => logged503().length > 0);
    for (const line of logged503()) assert.match(line, /"path":"\/approve\/…"/, 'its path is logged redacted');
    const log = readFileSync(logFile, 'utf8');
    assert.ok(!log.includes(token), 'the token is nowhere in the log');
    assert.ok(!log.includes(token.split('.')[1] as string), "nor is the token's signature");
  });
});
