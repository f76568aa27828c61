import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { startApi, type TestApi } from '../support/api';
import { waitForRun } from '../support/engine';
import { client } from '../support/http';
import { eventually, pidsWith, runPython, startPython } from '../support/python-runs';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

// Python code cannot outlive its run or exhaust the host (docs/security.md, Python sandbox), over HTTP
// against a real worker with the default limits (64 processes, 64 MB scratch, 1024 MB memory).

/** User code that leaves a daemon (fork, setsid, fork, exec) touching `marker` in its scratch folder. */
function daemonCode(token: string): string {
  const loop =
    'import time\nwhile True:\n    try:\n        open("marker", "a").write("x")\n    except OSError:\n        pass\n    time.sleep(0.1)\n';
  return `
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", ${JSON.stringify(loop)}, ${JSON.stringify(token)}])
    os._exit(0)
os.wait()
time.sleep(120)
return {}`;
}

describe('e2e: Python code cannot outlive its run or exhaust the host', function () {
  this.timeout(240_000);
  let api: TestApi;
  let worker: TestWorker;
  let http: ReturnType<typeof client>;
  const workerTmp = path.join(stack.tmpDir, `worker-tmp-${randomBytes(4).toString('hex')}`);
  const tokens: string[] = [];

  before(async () => {
    mkdirSync(workerTmp, { recursive: true });
    api = await startApi();
    worker = await startWorker(api.env, { TMPDIR: workerTmp });
    http = client(api.baseUrl);
  });
  after(async () => {
    // Should a daemon have escaped after all, it must not outlive the suite.
    for (const pid of tokens.flatMap(pidsWith)) process.kill(pid, 'SIGKILL');
    await worker?.stop();
    await api?.close();
  });

  /** Starts a daemon-leaving run, watches the marker grow from outside, ends the run with `end`. */
  async function daemonGoneAfter(config: Record<string, unknown>, end: (runId: string) => Promise<unknown>) {
    const token = `spur-daemon-${randomBytes(6).toString('hex')}`;
    tokens.push(token);
    const runId = await startPython(http, daemonCode(token), config);
    const pid = await eventually('the daemon starts', () => pidsWith(token)[0]);
    const marker = await eventually('the marker appears', () => {
      try {
        return openSync(`/proc/${pid}/cwd/marker`, 'r');
      } catch {
        return undefined;
      }
    });
    try {
      const first = fstatSync(marker).size;
      await eventually('the daemon touches the marker', () => (fstatSync(marker).size > first ? true : undefined));
      await end(runId);
      await eventually(
        'every process of the run is gone',
        () => (pidsWith(token).length === 0 ? true : undefined),
        20_000,
      );
      const size = fstatSync(marker).size;
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(fstatSync(marker).size, size, 'the marker stopped changing');
    } finally {
      closeSync(marker);
    }
  }

  it('kills a fork+setsid double-fork daemon when the run times out', async () => {
    await daemonGoneAfter({ timeout_seconds: 4 }, async (runId) => {
      const run = await waitForRun(http, runId, undefined, 60_000);
      assert.equal(run.status, 'FAILED');
    });
  });

  it('kills a fork+setsid double-fork daemon when the run is cancelled', async () => {
    await daemonGoneAfter({ timeout_seconds: 60 }, async (runId) => {
      assert.equal((await http.post(`/wf/cancel_workflow/${runId}/`)).body.status, 'CANCELED');
    });
  });

  it('bounds processes and threads (a fork bomb stops early) and the service still answers', async () => {
    const code = `
import os, threading, time
children, error = [], ""
try:
    for _ in range(400):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as e:
    error = type(e).__name__
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
threading.stack_size(256 * 1024)
stop, threads, terror = threading.Event(), 0, ""
try:
    for _ in range(400):
        threading.Thread(target=stop.wait, daemon=True).start()
        threads += 1
except RuntimeError as e:
    terror = str(e)
stop.set()
return {"forked": len(children), "error": error, "threads": threads, "terror": terror}`;
    const task = await runPython(http, code);
    assert.equal(task.status, 'COMPLETED', task.error);
    const out = task.outputs as { forked: number; error: string; threads: number; terror: string };
    assert.ok(out.forked < 64, `forked ${out.forked}`);
    assert.equal(out.error, 'BlockingIOError');
    assert.ok(out.threads < 64, `started ${out.threads} threads`);
    assert.match(out.terror, /can't start new thread/);
    assert.equal((await http.get('/health')).status, 200);
    assert.equal((await runPython(http, 'return {"ok": 1}')).status, 'COMPLETED');
  });

  it('stops a disk fill early, in one file and in many, and leaves nothing behind', async () => {
    const code = `
import os
def fill(names):
    written, error = 0, ""
    try:
        for name in names:
            with open(name, "ab") as f:
                for _ in range(1024 if len(names) == 1 else 1):
                    f.write(b"x" * (1 << 20))
                    f.flush()
                    written += 1
    except OSError as e:
        error = e.strerror
    for name in names:
        if os.path.exists(name):
            os.remove(name)
    return written, error
one = fill(["big"])
many = fill(["part%d" % i for i in range(1024)])
shm = fill(["/dev/shm/big"])
return {"one": one, "many": many, "shm": shm}`;
    const task = await runPython(http, code, { timeout_seconds: 120 });
    assert.equal(task.status, 'COMPLETED', task.error);
    const out = task.outputs as Record<'one' | 'many' | 'shm', [number, string]>;
    for (const [name, [mb, error]] of Object.entries(out)) {
      assert.ok(mb <= 64, `${name}: wrote ${mb} MB`);
      assert.match(error, /File too large|No space left on device/, name);
    }
    // tsx keeps its compile cache there; nothing else may be.
    assert.deepEqual(
      readdirSync(workerTmp).filter((f) => !f.startsWith('tsx-')),
      [],
      "nothing in the worker's temporary folder",
    );
  });

  it('fails a 4 GB allocation inside the node with a clear message, within the installation maximum', async () => {
    const task = await runPython(http, 'b = bytearray(4 * 1024 ** 3)\nreturn {"n": len(b)}', { memory_limit_mb: 8192 });
    assert.equal(task.status, 'FAILED');
    assert.match(
      task.error ?? '',
      /exceeded the memory limit of 1024 MB .*asks for 8192 MB.*SPUR_PYTHON_MAX_MEMORY_MB/,
    );
  });

  // Last: it kills this suite's worker.
  it('kills a fork+setsid double-fork daemon when its worker dies', async () => {
    await daemonGoneAfter({ timeout_seconds: 60 }, async () => {
      worker.process.kill('SIGKILL');
      await worker.process.exited;
    });
  });
});
