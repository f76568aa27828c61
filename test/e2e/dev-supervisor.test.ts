import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_RESTART_POLICY, restartDelay, supervise } from '../../scripts/lib/supervisor';
import { until } from '../support/exec-log';
import { stack } from '../support/stack';

/** A stand-in for the worker or the api: writes its pid to a file, then stays up until killed. */
function stayUp(pidFile: string) {
  return {
    name: 'stand-in',
    command: process.execPath,
    args: [
      '-e',
      `require('fs').appendFileSync(${JSON.stringify(pidFile)}, process.pid + '\\n'); setInterval(() => {}, 1000)`,
    ],
  };
}

const pids = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);

describe('dev: a supervised process (the worker, the api under `npm run dev`) is restarted when it dies', function () {
  this.timeout(60_000);

  it('restarts a process killed with SIGKILL, logs it, and stops for good when asked', async () => {
    const pidFile = path.join(stack.tmpDir, `supervised-${Date.now()}.pids`);
    writeFileSync(pidFile, '');
    const lines: string[] = [];
    const supervised = supervise(stayUp(pidFile), { ...DEFAULT_RESTART_POLICY, initialDelayMs: 100 }, (line) =>
      lines.push(line),
    );
    try {
      await until('the first start', () => pids(pidFile).length === 1);
      supervised.current.kill('SIGKILL');
      await until('a restart', () => pids(pidFile).length === 2);
      assert.equal(supervised.restarts, 1);
      assert.match(lines.join('\n'), /stand-in exited \(code null\); restarting in 0\.1 s \(restart 1\)/);
      assert.notEqual(pids(pidFile)[1], pids(pidFile)[0]);
      supervised.current.kill('SIGKILL'); // dies again at once: a longer wait this time
      await until('a second restart', () => pids(pidFile).length === 3);
      assert.match(lines.at(-1) ?? '', /restarting in 0\.2 s \(restart 2\)/);
    } finally {
      await supervised.stop('SIGTERM', 5000);
    }
    assert.equal(supervised.current.running, false, 'stopped');
    assert.equal(supervised.restarts, 2, 'a stop is not a crash: no restart after it');
  });

  it('backs off exponentially up to a ceiling', () => {
    const policy = { initialDelayMs: 500, factor: 2, maxDelayMs: 3000, healthyAfterMs: 60_000 };
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => restartDelay(policy, n)),
      [500, 1000, 2000, 3000, 3000],
    );
  });
});
