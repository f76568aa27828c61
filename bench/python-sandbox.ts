// What the Python sandbox costs: a trivial PythonFuncNode (`return {"y": input_model.src.x + "!"}`)
// executed in process, as a worker's activity would, with the sandbox off (a bare python3), with
// bubblewrap without and with its per-sandbox cgroup (the default where the host allows) and with bubblewrap plus the opt-in network (slirp4netns). The variants
// run interleaved round by round, so load from other processes on the machine hits them alike;
// medians are reported, with each execution's CPU (sandboxes included) where the bench can make a
// cgroup (root). Writes bench/results/python-sandbox-latest.md. Nothing is asserted.
// Usage: npx tsx bench/python-sandbox.ts [rounds=200]; SPUR_PYTHON picks the interpreter
// for every variant (unset, a root bench's sandboxed variants use /usr/bin/python3, since their sandbox
// user cannot read pyenv under /root, while `off` runs python3 on PATH: set it to compare one interpreter).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PythonSettings } from '../src/config/settings';
import { PythonSandbox } from '../src/nodes/code-execution/python-sandbox';
import { pythonFuncNode } from '../src/nodes/code-execution/python-func-node';
import { REPO_ROOT } from '../scripts/lib/tools';
import { pythonNodeContext } from './lib/python-node-context';
import { cgroupAccounting, cgroupSeconds, joinCgroup } from './lib/cpu-cgroups';
import { median, msSince, round, summarize } from './lib/stats';

const rounds = Number(process.argv[2] ?? 200);
const warmup = 10;
const base: PythonSettings = {
  sandbox: 'bubblewrap',
  interpreter: process.env.SPUR_PYTHON,
  network: 'none',
  maxMemoryMb: 1024,
  maxProcesses: 64,
  scratchMb: 64,
  maxConcurrent: 64,
  cgroup: 'auto',
  privateDirs: [{ path: REPO_ROOT, name: "Spur's source tree" }],
};
const variants: Record<string, PythonSettings> = {
  'off (bare python3)': { ...base, sandbox: 'off' },
  'bubblewrap, no cgroup caps (SPUR_PYTHON_CGROUP=off)': { ...base, cgroup: 'off' },
  'bubblewrap (default: cgroup caps where the host allows)': base,
  'bubblewrap + network (slirp4netns)': { ...base, network: 'internet' },
};
const config = pythonFuncNode.config.parse({
  code: 'return {"y": input_model.src.x + "!"}',
  output_schema: { y: 'string' },
});

/** Waited after each execution before its CPU is read. */
const SETTLE_MS = 20;

/** This process's CPU-ms with its children's, sandboxes included (a cgroup of its own), where one can be made. */
function cpuOfThisProcessAndItsSandboxes(): (() => number) | undefined {
  if (!cgroupAccounting()) return undefined;
  joinCgroup(process.pid, [process.pid]);
  return () => cgroupSeconds(process.pid) * 1000;
}

async function main(): Promise<void> {
  const sandboxes = Object.fromEntries(
    Object.entries(variants).map(([name, settings]) => [name, new PythonSandbox(settings)]),
  );
  for (const [name, sandbox] of Object.entries(sandboxes)) {
    const state = await sandbox.state();
    if (!state.ok) throw new Error(`${name}: ${state.detail}`);
  }
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  const cpuSamples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  const cpuMs = cpuOfThisProcessAndItsSandboxes();
  for (let i = 0; i < warmup + rounds; i++) {
    for (const [name, sandbox] of Object.entries(sandboxes)) {
      const [start, cpuBefore] = [process.hrtime.bigint(), cpuMs?.()];
      const out = await pythonFuncNode.execute?.(config, { src: { x: 'hi' } }, pythonNodeContext(sandbox));
      if (out?.y !== 'hi!') throw new Error(`${name}: unexpected output ${JSON.stringify(out)}`);
      const elapsed = msSince(start);
      // The kernel tears a sandbox's namespaces down after its result is in: counted with it.
      if (cpuMs) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      if (i >= warmup) {
        samples[name]?.push(elapsed);
        if (cpuMs && cpuBefore !== undefined) cpuSamples[name]?.push(cpuMs() - cpuBefore);
      }
    }
  }
  const offMedian = summarize(samples['off (bare python3)'] ?? []).p50;
  const lines = [
    `# Python node latency with and without the sandbox`,
    '',
    `${new Date().toISOString()} · ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )} (shared with other agents) · ${rounds} interleaved rounds after ${warmup} warm-up · \`npx tsx bench/python-sandbox.ts\``,
    '',
    '| variant | median ms | p95 ms | mean ms | median − off | median CPU-ms |',
    '|---|---|---|---|---|---|',
    ...Object.entries(samples).map(([name, xs]) => {
      const s = summarize(xs);
      const cpu = cpuSamples[name]?.length ? String(round(median(cpuSamples[name] ?? []), 1)) : '–';
      return `| ${name} | ${round(s.p50, 1)} | ${round(s.p95, 1)} | ${round(s.mean, 1)} | ${round(s.p50 - offMedian, 1)} | ${cpu} |`;
    }),
    '',
    "A trivial PythonFuncNode executed in process (the node's `execute`, as the worker's activity runs it): interpreter start, harness, JSON in and out. The sandbox adds bwrap's namespace and mount setup, prlimit and the kernel's teardown of the namespaces.",
    '',
    cpuMs
      ? `CPU-ms per execution: this process and every process it started, sandboxes included, read from a cgroup (v1 cpuacct) around each execution and ${SETTLE_MS} ms after it, so the kernel's teardown of the sandbox counts with it.`
      : 'CPU-ms per execution: not measured (no cgroup v1 cpuacct group could be made: it needs root).',
  ];
  const text = `${lines.join('\n')}\n`;
  writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'python-sandbox-latest.md'), text);
  process.stdout.write(text);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
