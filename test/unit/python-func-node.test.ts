import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pythonFuncNode } from '../../src/nodes/code-execution/python-func-node.js';
import { NodeExecutionError } from '../../src/nodes/errors.js';
import { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox.js';
import { coerceToOutputSchema } from '../../src/nodes/output-coercion.js';
import type { NodeExecutionContext, NodeInput, NodeOutput } from '../../src/nodes/types.js';
import { devOutboundFetch } from '../support/outbound';
import { childrenOf, processEnded, procText } from '../support/host-process';

// These tests start real sandboxed python3 processes: the sandbox and the interpreter are the
// components under test. What the sandbox keeps out is tested over HTTP in test/e2e/python-sandbox.test.ts.

const SETTINGS = {
  sandbox: 'bubblewrap',
  interpreter: undefined,
  network: 'none',
  maxMemoryMb: 1024,
  maxProcesses: 64,
  scratchMb: 64,
  maxConcurrent: 4,
  cgroup: 'auto',
  privateDirs: [],
} as const;
const sandbox = new PythonSandbox(SETTINGS);

function context(signal = new AbortController().signal, heartbeat = () => undefined): NodeExecutionContext {
  return {
    runId: 'run-1',
    nodeId: 'node-1',
    nodeTitle: 'Python_1',
    signal,
    secret: async () => undefined,
    fetch: devOutboundFetch,
    heartbeat,
    pythonSandbox: sandbox,
  };
}

const INPUT: NodeInput = { input_node: { n: 21, text: 'hi', rows: [{ name: 'a' }, { name: 'b' }], items: [1, 2] } };

async function run(config: Record<string, unknown>, ctx = context(), input = INPUT): Promise<NodeOutput> {
  assert.ok(pythonFuncNode.execute);
  return pythonFuncNode.execute(pythonFuncNode.config.parse({ output_schema: {}, ...config }), input, ctx);
}

async function failure(config: Record<string, unknown>, ctx = context()): Promise<Error> {
  const error = await run(config, ctx).then(
    () => assert.fail('expected the node to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Error);
  return error;
}

/** Processes that are children of this test process (the runner spawns the sandbox directly). */
/** The sandbox's launchers: children of the spawner helper, which starts them (spawner.ts). */
function pythonChildren(): number[] {
  const helper = sandbox.spawner.helperPid;
  if (helper === undefined) return [];
  try {
    return execFileSync('pgrep', ['-P', String(helper), '^(bwrap|python)'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `config`, waits until its Python process shows up (then calls `onRunning`), and returns the
 * failure with the pids seen. No clock: a node that never stops fails the test by its timeout.
 */
async function failureWithChildren(
  config: Record<string, unknown>,
  ctx: NodeExecutionContext,
  onRunning: () => void = () => undefined,
): Promise<{ error: Error; pids: number[] }> {
  let settled = false;
  const failing = failure(config, ctx).finally(() => (settled = true));
  let pids: number[] = [];
  while (!settled && pids.length === 0) {
    pids = pythonChildren();
    if (pids.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  onRunning();
  return { error: await failing, pids };
}

describe('PythonFuncNode', function () {
  this.timeout(10_000);

  it('computes from nested input by attribute and by item', async () => {
    const out = await run({
      code: [
        'n = input_model.input_node.n',
        'return {"double": n * 2, "same": input_model["input_node"]["n"] == n,',
        '        "names": [r.name for r in input_model.input_node.rows], "items": input_model.input_node.items}',
      ].join('\n'),
    });
    assert.deepEqual(out, { double: 42, same: true, names: ['a', 'b'], items: [1, 2] });
  });

  it('coerces the result to output_schema and drops extra keys', async () => {
    const out = await run({
      code: 'return {"count": "5", "ratio": "0.5", "ok": "true", "extra": 1}',
      output_schema: { count: 'int', ratio: 'float', ok: 'bool' },
    });
    assert.deepEqual(out, { count: 5, ratio: 0.5, ok: true });
  });

  it('encodes datetimes as ISO text and sets as lists', async () => {
    const out = await run({ code: 'import datetime\nreturn {"d": datetime.datetime(2024, 1, 2, 3, 4, 5), "s": {7}}' });
    assert.deepEqual(out, { d: '2024-01-02T03:04:05', s: [7] });
  });

  it('reads input numbers, nulls and unicode as json.loads would, and lets the code use json itself', async () => {
    const input = { src: { big: 9007199254740991, f: -1.5e-7, none: null, t: 'é😀\u2028', nested: [{ a: [] }] } };
    const out = await run(
      {
        code: [
          'import json',
          's = input_model.src',
          'return {"types": [type(s.big).__name__, type(s.f).__name__, type(s.none).__name__],',
          '        "exact": s.big == 9007199254740991, "t": s.t, "dumped": json.dumps(s, sort_keys=True)}',
        ].join('\n'),
      },
      context(),
      input,
    );
    assert.deepEqual(out.types, ['int', 'float', 'NoneType']);
    assert.equal(out.exact, true);
    assert.equal(out.t, 'é😀\u2028');
    // json.dumps's own text (ASCII escapes, its separators): the input reached the code whole.
    assert.equal(
      out.dumped,
      '{"big": 9007199254740991, "f": -1.5e-07, "nested": [{"a": []}], "none": null, "t": "\\u00e9\\ud83d\\ude00\\u2028"}',
    );
  });

  it("quotes the user's own lines in a traceback the code formats itself", async () => {
    const out = await run({
      code: [
        'import traceback',
        'try:',
        '    1 / 0',
        'except ZeroDivisionError:',
        '    return {"t": traceback.format_exc()}',
      ].join('\n'),
    });
    assert.match(String(out.t), /File "<code>", line 3, in user_function\n {4}1 \/ 0\n/);
  });

  it('fails a result JSON cannot hold (an object, NaN, a cycle) with the reason, not a broken result', async () => {
    const cases: Array<[string, RegExp]> = [
      ['return {"o": object()}', /not JSON serialisable: Object of type object is not JSON serializable/],
      ['return {"n": float("nan")}', /not JSON serialisable: Out of range float values are not JSON compliant/],
      ['d = {}\nd["self"] = d\nreturn d', /not JSON serialisable: Circular reference detected/],
    ];
    for (const [code, message] of cases) {
      const error = await failure({ code });
      assert.ok(error instanceof NodeExecutionError, `${code}: ${error.message}`);
      assert.match(error.message, message, code);
    }
  });

  it('keeps non-ASCII text intact', async () => {
    const out = await run({ code: 'return {"t": "héllo wörld ✓ " * 20000}' });
    assert.equal(out.t, 'héllo wörld ✓ '.repeat(20000));
  });

  it('ignores what the code prints', async () => {
    const out = await run({
      code: 'import sys\nprint(\'{"ok": true, "output": {"x": 0}}\')\nprint("noise", file=sys.stderr)\nreturn {"x": 1}',
    });
    assert.deepEqual(out, { x: 1 });
  });

  it('reports an exception with its type, message and the user code frames', async () => {
    const error = await failure({ code: 'def f(x):\n    return 1 / x\nreturn {"r": f(0)}' });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /^ZeroDivisionError: division by zero/);
    // The frame quotes the user's line (their source is in linecache's cache once a traceback reads it).
    assert.match(error.message, /File "<code>", line 2, in f\n {4}return 1 \/ x/);
    assert.doesNotMatch(error.message, /<string>/, 'harness frames are hidden');
  });

  it('counts lines of the user code in frames of comprehensions, lambdas and classes', async () => {
    const error = await failure({
      code: 'class C:\n    def m(self):\n        return [1 / x for x in (1, 0)]\ng = lambda: C().m()\nreturn {"r": g()}',
    });
    assert.match(error.message, /File "<code>", line 5, in user_function/);
    assert.match(error.message, /File "<code>", line 4, in <lambda>/);
    assert.match(error.message, /File "<code>", line 3, in (<listcomp>|m)/);
    assert.match(error.message, /return \[1 \/ x for x in \(1, 0\)\]/, 'the line is quoted from the user code');
  });

  it('reports an error the compiler finds after parsing with the line of the user code', async () => {
    const error = await failure({ code: 'x = 1\nbreak\nreturn {}' });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /SyntaxError: 'break' outside loop \(line 2\)/);
  });

  it('reports a syntax error with the line of the user code', async () => {
    const error = await failure({ code: 'x = 1\ny = = 2\nreturn {}' });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /SyntaxError: .*\(line 2\)/);
  });

  it('fails when the code does not return a dict', async () => {
    const error = await failure({ code: 'return [1, 2]' });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /must return a dict, got list/);
  });

  it('times out, killing the process', async function () {
    const { error, pids } = await failureWithChildren({ code: 'while True: pass', timeout_seconds: 1 }, context());
    assert.ok(error instanceof NodeExecutionError);
    assert.equal(error.message, 'Python code timed out after 1s');
    assert.ok(pids.length > 0, 'the python process was seen while running');
    for (const pid of pids) assert.equal(isAlive(pid), false, `python ${pid} is still alive`);
  });

  it('caps memory', async () => {
    const error = await failure({ code: 'b = bytearray(2_000_000_000)\nreturn {}', memory_limit_mb: 128 });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /memory limit of 128 MB/);
  });

  it('caps memory at the installation maximum and says so', async () => {
    const error = await failure({ code: 'b = bytearray(1_500_000_000)\nreturn {}', memory_limit_mb: 4096 });
    assert.ok(error instanceof NodeExecutionError);
    assert.match(error.message, /memory limit of 1024 MB.*asks for 4096 MB.*SPUR_PYTHON_MAX_MEMORY_MB/);
  });

  it('imports the standard library and writes to its own scratch folder', async () => {
    const out = await run({
      code: 'import json, os, tempfile, sqlite3\nopen("a.txt", "w").write("x")\nwith tempfile.NamedTemporaryFile() as f:\n    name = f.name\nreturn {"cwd": os.getcwd(), "tmp": name.startswith("/tmp/"), "read": open("a.txt").read()}',
    });
    assert.deepEqual(out, { cwd: '/tmp', tmp: true, read: 'x' });
  });

  it('proves a fresh sandbox starts with one probe for runs that start together', async () => {
    // The probe (python3 printing sandbox-ok) is this process's own child; runs go through the helper.
    const probes = new Set<number>();
    const look = () => {
      for (const pid of childrenOf(process.pid))
        if (procText(`/proc/${pid}/cmdline`).includes('sandbox-ok')) probes.add(pid);
    };
    const fresh = new PythonSandbox(SETTINGS);
    const sampler = setInterval(look, 1);
    try {
      const outs = await Promise.all(
        [1, 2, 3, 4].map((i) => run({ code: `return {"i": ${i}}` }, { ...context(), pythonSandbox: fresh })),
      );
      assert.deepEqual(outs, [{ i: 1 }, { i: 2 }, { i: 3 }, { i: 4 }]);
    } finally {
      clearInterval(sampler);
    }
    assert.ok(probes.size <= 1, `${probes.size} probes started: ${[...probes].join(', ')}`);
  });

  it('refuses to run without a sandbox, naming the setting', async () => {
    const ctx = { ...context(), pythonSandbox: undefined };
    const error = await failure({ code: 'return {}' }, ctx);
    assert.match(error.message, /no Python sandbox/);
  });

  it('unsandboxed, dies with a worker killed by SIGKILL', async function () {
    this.timeout(20_000);
    const dir = mkdtempSync(path.join(tmpdir(), 'spur-orphan-'));
    const pidFile = path.join(dir, 'pid');
    const host = spawn(process.execPath, ['--import', 'tsx', 'test/support/unsandboxed-python-host.ts', pidFile], {
      stdio: 'ignore',
    });
    try {
      let pid = 0;
      while (!pid) {
        await new Promise((r) => setTimeout(r, 50));
        pid = Number(readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }) || 0);
      }
      assert.ok(!processEnded(pid), 'the python process runs');
      host.kill('SIGKILL');
      // The code sleeps 60 s, past this test's timeout: only its death with the host ends it in time.
      while (!processEnded(pid)) await new Promise((r) => setTimeout(r, 50));
    } finally {
      host.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kills the process at once when aborted', async () => {
    const controller = new AbortController();
    // The code sleeps 30 s, past this suite's timeout: only the abort can end it in time.
    const { error, pids } = await failureWithChildren(
      { code: 'import time\ntime.sleep(30)' },
      context(controller.signal),
      () => controller.abort(),
    );
    assert.equal(error.name, 'AbortError');
    assert.ok(pids.length > 0, 'the python process was seen while running');
    for (const pid of pids) assert.equal(isAlive(pid), false, `python ${pid} is still alive`);
  });

  it('heartbeats while the code runs', async () => {
    let beats = 0;
    await run(
      { code: 'import time\ntime.sleep(1.3)\nreturn {}' },
      context(undefined, () => void beats++),
    );
    assert.ok(beats >= 1);
  });
});

describe('coerceToOutputSchema', () => {
  it('converts values and drops extra keys', () => {
    const out = coerceToOutputSchema(
      { i: '5', j: 5.0, f: '2.5', b: 0, s: 7, l: [1], d: { a: 1 }, any: null, extra: true },
      { i: 'int', j: 'integer', f: 'float', b: 'bool', s: 'str', l: 'list', d: 'dict', any: 'List[Dict[str, str]]' },
    );
    assert.deepEqual(out, { i: 5, j: 5, f: 2.5, b: false, s: '7', l: [1], d: { a: 1 }, any: null });
  });

  it('keeps the output as it is without a schema', () => {
    assert.deepEqual(coerceToOutputSchema({ a: 1 }, {}), { a: 1 });
    assert.deepEqual(coerceToOutputSchema({ a: 1 }, undefined), { a: 1 });
  });

  it('names the field that cannot be coerced or is missing', () => {
    assert.throws(
      () => coerceToOutputSchema({ n: '5.5' }, { n: 'int' }),
      (e: Error) => e instanceof NodeExecutionError && /'n'/.test(e.message),
    );
    for (const text of ['1e2', '0x10', '', ' '])
      assert.throws(() => coerceToOutputSchema({ n: text }, { n: 'int' }), /'n'/);
    assert.deepEqual(coerceToOutputSchema({ n: ' -7 ', f: '1e2' }, { n: 'int', f: 'number' }), { n: -7, f: 100 });
    assert.throws(() => coerceToOutputSchema({ b: 'maybe' }, { b: 'boolean' }), /'b'/);
    assert.throws(() => coerceToOutputSchema({ l: 'x' }, { l: 'array' }), /'l'/);
    assert.throws(() => coerceToOutputSchema({}, { out: 'string' }), /'out' is missing/);
  });
});
