import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import type { TestApi } from '../support/api';
import type { client } from '../support/http';
import { waitForRun } from '../support/engine';
import { type PyRun, runPython, startPython } from '../support/python-runs';
import { PY_LOOKERS, type SecretHolder, startSecretHolder } from '../support/secret-holder';
import { stack } from '../support/stack';
import type { TestWorker } from '../support/worker';

// What user code must not read or reach (docs/security.md, Python sandbox), asked of a real worker over HTTP.
// The worker holds a marker secret in its environment and one in SPUR_DATA_DIR/secret.key.

const hostPort = (address: string) => Number(address.split(':').pop());

describe('e2e: Python code cannot read secrets or reach the network', function () {
  this.timeout(180_000);
  let holder: SecretHolder;
  let api: TestApi;
  let worker: TestWorker;
  let http: ReturnType<typeof client>;
  let MARKER: string;
  let dataDir: string;

  before(async () => {
    holder = await startSecretHolder();
    ({ api, worker, http, marker: MARKER, dataDir } = holder);
  });
  after(() => holder?.stop());

  it("reads no process's environment, not the data folder, the source tree or the worker's home", async () => {
    const code = `
import glob, json, os
${PY_LOOKERS}
seen = {"parent": grab("/proc/%d/environ" % os.getppid()), "self": grab("/proc/self/environ"), "env": json.dumps(dict(os.environ))}
for p in glob.glob("/proc/[0-9]*/environ"):
    seen[p] = grab(p)
seen["key"] = grab(${JSON.stringify(path.join(dataDir, 'secret.key'))})
seen["data"] = listing(${JSON.stringify(dataDir)})
seen["source"] = grab(${JSON.stringify(path.join(REPO_ROOT, 'src', 'config', 'env.ts'))})
seen["home"] = listing(${JSON.stringify(os.homedir())})
return {"seen": seen}`;
    const task = await runPython(http, code);
    assert.equal(task.status, 'COMPLETED', task.error);
    const seen = (task.outputs as { seen: Record<string, string> }).seen;
    const text = JSON.stringify(seen);
    assert.ok(
      !text.includes(MARKER),
      `the marker leaked: ${Object.keys(seen)
        .filter((k) => seen[k]?.includes(MARKER))
        .join(', ')}`,
    );
    assert.ok(!text.includes(api.env.SPUR_SECRET_KEY as string), 'the secret key leaked');
    assert.ok(!text.includes(api.env.SPUR_MONGODB_URI as string), 'the database address leaked');
    assert.match(seen.key ?? '', /^ERR/);
    assert.match(seen.data ?? '', /^ERR/);
    assert.match(seen.source ?? '', /^ERR/);
    assert.match(seen.home ?? '', /^ERR/);
  });

  it("does not see another run's scratch files", async () => {
    // The writer proves it wrote (its own read-back) and that the file was still there after the
    // reader had finished looking (its stamps, on the host's clock, which sandboxes share).
    const writerCode = `
import time
open("other-run-file", "w").write(${JSON.stringify(MARKER)})
wrote_at = time.time()
wrote = open("other-run-file").read()
time.sleep(40)
return {"wrote": wrote, "wrote_at": wrote_at, "still": open("other-run-file").read(), "still_at": time.time()}`;
    const writer = await startPython(http, writerCode, {
      timeout_seconds: 90,
      output_schema: { wrote: 'string', wrote_at: 'float', still: 'string', still_at: 'float' },
    });
    try {
      await waitForRun(
        http,
        writer,
        (r) => (r as PyRun).tasks?.some((t) => t.node_id === 'py' && t.status === 'RUNNING') ?? false,
        60_000,
      );
      const code = `
import glob, time
looked_from = time.time()
hits = []
for _ in range(100):
    hits = glob.glob("/tmp/**/other-run-file", recursive=True) + glob.glob(${JSON.stringify(os.tmpdir())} + "/**/other-run-file", recursive=True)
    if hits:
        break
    time.sleep(0.1)
return {"found": open(hits[0]).read() if hits else "", "looked_from": looked_from, "looked_until": time.time()}`;
      const task = await runPython(http, code, {
        output_schema: { found: 'string', looked_from: 'float', looked_until: 'float' },
      });
      assert.equal(task.status, 'COMPLETED', task.error);
      const reader = task.outputs as { found: string; looked_from: number; looked_until: number };
      assert.equal(reader.found, '');
      const done = (await waitForRun(http, writer, undefined, 120_000)) as PyRun;
      const wrote = done.tasks.find((t) => t.node_id === 'py');
      assert.equal(wrote?.status, 'COMPLETED', wrote?.error);
      const w = wrote?.outputs as { wrote: string; wrote_at: number; still: string; still_at: number };
      assert.equal(w.wrote, MARKER, 'the writer wrote the file');
      assert.equal(w.still, MARKER, "the file was still there at the writer's end");
      assert.ok(w.wrote_at < reader.looked_until, 'the reader kept looking after the file was written');
      assert.ok(reader.looked_until < w.still_at, "the writer (and its file) outlived the reader's look");
    } finally {
      await http.post(`/wf/cancel_workflow/${writer}/`);
    }
  });

  it("cannot connect to the service's ports and has no interface but lo and no route", async () => {
    const ports = {
      api: hostPort(new URL(api.baseUrl).host),
      temporal: hostPort(stack.temporalAddress),
      database: hostPort(new URL(stack.mongoUri).host),
    };
    const code = `
import socket
out = {}
for name, port in ${JSON.stringify(ports)}.items():
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        out[name] = "connected"
    except OSError as e:
        out[name] = type(e).__name__
    finally:
        s.close()
out["interfaces"] = [name for _, name in socket.if_nameindex()]
out["routes"] = open("/proc/net/route").read().strip().split("\\n")[1:]
return out`;
    const task = await runPython(http, code);
    assert.equal(task.status, 'COMPLETED', task.error);
    assert.deepEqual(task.outputs, {
      api: 'ConnectionRefusedError',
      temporal: 'ConnectionRefusedError',
      database: 'ConnectionRefusedError',
      interfaces: ['lo'],
      routes: [],
    });
  });

  it('kills "its parent" without harm: the worker keeps serving and a fresh run succeeds', async () => {
    const killer = await runPython(
      http,
      'import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nreturn {"parent": os.getppid()}',
    );
    assert.ok(worker.process.running, 'the worker is alive');
    assert.ok(['COMPLETED', 'FAILED'].includes(killer.status), killer.status);
    const fresh = await runPython(http, 'return {"ok": 1}');
    assert.equal(fresh.status, 'COMPLETED', fresh.error);
    assert.deepEqual(fresh.outputs, { ok: 1 });
  });
});
