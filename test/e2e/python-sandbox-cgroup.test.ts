import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseProcCgroup } from '../../src/nodes/code-execution/sandbox-cgroup';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { childOnTheWay, eventually, pidsWith, runPython, startPython } from '../support/python-runs';
import { startUnprivilegedWorker, startWorker, type TestWorker } from '../support/worker';
import { runWorkerHealth } from '../support/worker-health';
import { waitForRun } from '../support/engine';

// One sandbox, however many processes it forks, holds at most its memory and task caps: over HTTP
// against a real root worker on this host's cgroups (v1 memory and pids here; v2 where the host has it).

const SCRATCH_MB = 64;
const MAX_PROCESSES = 64;

/** The cgroup directories of a host process and the caps written there, for v1 and v2 hosts alike. */
function cgroupOf(pid: number): { dirs: string[]; memoryBytes: number; tasks: number } {
  const own = parseProcCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  const memory = own.v1.get('memory');
  const pids = own.v1.get('pids');
  if (memory !== undefined && pids !== undefined) {
    const dirs = [path.join('/sys/fs/cgroup/memory', memory), path.join('/sys/fs/cgroup/pids', pids)] as const;
    return {
      dirs: [...dirs],
      memoryBytes: Number(readFileSync(path.join(dirs[0], 'memory.limit_in_bytes'), 'utf8')),
      tasks: Number(readFileSync(path.join(dirs[1], 'pids.max'), 'utf8')),
    };
  }
  const dir = path.join('/sys/fs/cgroup', own.unified ?? '/');
  return {
    dirs: [dir],
    memoryBytes: Number(readFileSync(path.join(dir, 'memory.max'), 'utf8')),
    tasks: Number(readFileSync(path.join(dir, 'pids.max'), 'utf8')),
  };
}

/** A parent that forks four children, each holding 150 MB of touched memory for a few seconds. */
function fourChildrenOf150Mb(parentFirstToGo: boolean): string {
  return `
import os, time
${parentFirstToGo ? 'open("/proc/self/oom_score_adj", "w").write("1000")' : ''}
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        open("/proc/self/oom_score_adj", "w").write("0")
        b = b"x" * (150 * 2**20)
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
return {"statuses": [os.waitpid(k, 0)[1] for k in kids]}`;
}

describe('e2e: each Python sandbox is capped as a whole by a cgroup of its own', function () {
  this.timeout(240_000);
  let api: TestApi;
  let worker: TestWorker;
  let http: ReturnType<typeof client>;

  before(async () => {
    api = await startApi();
    worker = await startWorker(api.env);
    http = client(api.baseUrl);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
  });

  it("the worker's health names the cgroup caps it applies", async () => {
    const health = await runWorkerHealth(api.env);
    assert.equal(health.code, 0, health.output);
    assert.match(health.output, /memory and task caps per sandbox through cgroup v[12]/);
  });

  it('every process of a sandbox, its launcher included, is in one cgroup with the caps, removed after the run', async () => {
    const token = `spur-cg-${randomBytes(6).toString('hex')}`;
    const code = `
import os, sys, time
child = os.fork()
if child == 0:
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", ${JSON.stringify(token)}])
time.sleep(3)
os.kill(child, 9)
os.waitpid(child, 0)
return {}`;
    const runId = await startPython(http, code, { memory_limit_mb: 256 });
    const pid = await eventually('the forked process starts', () => pidsWith(token)[0]);
    const cgroup = cgroupOf(pid);
    assert.ok(
      cgroup.dirs.every((dir) => path.basename(dir).startsWith('spur-sandbox-')),
      cgroup.dirs.join(', '),
    );
    assert.equal(cgroup.memoryBytes, (256 + 2 * SCRATCH_MB) * 1024 * 1024, 'memory_limit_mb plus both tmpfs');
    assert.equal(cgroup.tasks, MAX_PROCESSES + 2, 'SPUR_PYTHON_MAX_PROCESSES plus bwrap and its init');
    // The launcher (a child of the worker's spawner helper, spawner.ts) joined before it started bubblewrap.
    const launcher = childOnTheWay(childOnTheWay(worker.process.pid, pid), pid);
    assert.deepEqual(cgroupOf(launcher).dirs, cgroup.dirs, `the launcher (pid ${launcher}) is in the sandbox's cgroup`);

    const run = await waitForRun(http, runId, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run).slice(0, 400));
    await eventually(
      "the sandbox's cgroups are removed",
      () => (cgroup.dirs.some(existsSync) ? undefined : true),
      10_000,
    );
  });

  it('processes holding more than the cap together fail the node with a message naming it, and the worker goes on', async () => {
    // 4 × 150 MB in children of a parent that offers itself to the OOM killer first, under a cap of
    // 200 + 2 × 64 MB: each process is within its own 200 MB address-space limit.
    const task = await runPython(http, fourChildrenOf150Mb(true), { memory_limit_mb: 200, timeout_seconds: 30 });
    assert.equal(task.status, 'FAILED');
    assert.match(task.error ?? '', /exceeded the sandbox's memory cap of 328 MB/);
    const next = await runPython(http, 'return {"ok": True}');
    assert.equal(next.status, 'COMPLETED');
  });

  it('when the children are the largest, the cap kills children until the rest fit', async () => {
    const task = await runPython(http, fourChildrenOf150Mb(false), { memory_limit_mb: 200, timeout_seconds: 30 });
    assert.equal(task.status, 'COMPLETED', task.error);
    const statuses = (task.outputs?.statuses ?? []) as number[];
    assert.equal(statuses.length, 4);
    const killed = statuses.filter((s) => s === 9).length;
    assert.ok(killed >= 1 && killed < 4, `children killed by SIGKILL: ${killed} of 4 (${statuses.join(', ')})`);
  });

  it('a worker that may not create cgroups runs Python without them under auto, and refuses under required, saying why', async () => {
    await worker.stop();
    for (const [mode, expected] of [
      ['auto', 'COMPLETED'],
      ['required', 'FAILED'],
    ] as const) {
      worker = await startUnprivilegedWorker(api.env, { SPUR_PYTHON_CGROUP: mode });
      try {
        const task = await runPython(http, 'return {"ran": 1}');
        assert.equal(task.status, expected, `${mode}: ${task.error ?? ''}`);
        if (mode === 'required')
          assert.match(
            task.error ?? '',
            /SPUR_PYTHON_CGROUP=required, and no cgroup can be made for a sandbox: the worker's user may not create cgroups in \S+ \(run the worker as root, or delegate its cgroup to its user\)/,
          );
        else assert.deepEqual(task.outputs, { ran: 1 });
      } finally {
        await worker.stop();
      }
    }
    worker = await startWorker(api.env);
  });

  // Last: it replaces this suite's worker. The control: the same code is not stopped without the caps.
  it('with SPUR_PYTHON_CGROUP=off the same four children all finish (the cap, not the host, stopped them)', async () => {
    await worker.stop();
    worker = await startWorker(api.env, { SPUR_PYTHON_CGROUP: 'off' });
    const task = await runPython(http, fourChildrenOf150Mb(false), { memory_limit_mb: 200, timeout_seconds: 30 });
    assert.equal(task.status, 'COMPLETED', task.error);
    assert.deepEqual(task.outputs?.statuses, [0, 0, 0, 0]);
  });
});
