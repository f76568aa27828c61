// The workflow side of a run alone: CPU-ms to replay a recorded history (test/fixtures/histories)
// against a workflow bundle, in this process, with no server, no database and no activity — the
// SDK's workflow sandbox and Spur's workflow code, activation by activation, as a worker runs them.
// A change to the bundle or to workflow code shows here with a spread of a few percent, where the
// whole stack's CPU (bench/run-cost.ts) moves by more than that between blocks on a noisy host.
//
// Histories: a pure run that ends in its region, a short model call that ends the run, a regular
// model call that carries its saves, a short Python node. Each block replays one history
// REPLAYS times in one replay worker (the first 10 left out: the worker's start and warm-up); the
// bundles take turns, block by block.
//
// Usage: npx tsx bench/workflow-replay.ts [replays per block=100] [blocks=8];
// BENCH_BASELINE=<commit> replays that commit's bundle too and reports the ratio of each block to
// the baseline's block before it (median). Writes bench/results/workflow-replay-latest.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { buildWorkflowBundle } from '../scripts/build-bundle';
import { REPO_ROOT } from '../scripts/lib/tools';
import { readHistoryFile } from '../test/support/history-json';
import { quietRuntime } from '../test/support/quiet-runtime';
import { checkOutBaseline } from './lib/baseline-tree';
import { saveResults } from './lib/report';
import { median } from './lib/stats';

const REPLAYS = Number(process.argv[2] ?? 100);
const BLOCKS = Number(process.argv[3] ?? 8);
const WARMUP = 10;
const HISTORIES = [
  ['region-ended', '5-node pure (its region ends the run)'],
  ['short-ended', 'one short LLM call (ends the run)'],
  ['regular-carried', 'one LLM call (regular activity, carried saves)'],
  ['short-python', 'one PythonFuncNode (short)'],
] as const;

interface Bundle {
  name: string;
  code: string;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** CPU-ms per replay of `history`, over the replays after the warm-up; throws on a replay that fails. */
async function block(bundle: Bundle, workflowId: string, history: History): Promise<number> {
  const histories = Array.from({ length: REPLAYS + WARMUP }, (_, i) => ({ workflowId: `${workflowId}-${i}`, history }));
  let seen = 0;
  let from = 0;
  let to = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, histories)) {
    if (result.error) throw new Error(`${bundle.name}: ${workflowId} failed to replay: ${result.error.message}`);
    seen += 1;
    if (seen === WARMUP) from = cpuMs();
    to = cpuMs();
  }
  return (to - from) / REPLAYS;
}

/** The baseline commit's bundle, built by that commit's own builder in a worktree of it. */
function baselineBundle(ref: string, dir: string): Bundle {
  const tree = checkOutBaseline(ref);
  try {
    const out = path.join(dir, `baseline-${tree.commit}.js`);
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-bundle.ts', out], { cwd: tree.root });
    return { name: `baseline ${tree.commit}`, code: readFileSync(out, 'utf8') };
  } finally {
    tree.remove();
  }
}

async function main(): Promise<void> {
  quietRuntime();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spur-replay-bench-'));
  try {
    const current: Bundle = {
      name: 'this build',
      code: readFileSync(await buildWorkflowBundle(path.join(dir, 'current.js')), 'utf8'),
    };
    const ref = process.env.BENCH_BASELINE;
    const bundles = ref ? [baselineBundle(ref, dir), current] : [current];
    const started = Date.now();
    const lines = [
      `# Workflow replay — ${new Date().toISOString()}`,
      '',
      `CPU-ms per replay of a recorded history (this process, every thread: the SDK's replay worker, its sandbox and Spur's workflow code), ${REPLAYS} replays per block after ${WARMUP} left out, ${BLOCKS} blocks per bundle taking turns; medians of the blocks.`,
      '',
      `| history | ${bundles.map((b) => b.name).join(' | ')} |${ref ? ' ratio (median of paired blocks) |' : ''}`,
      `| --- |${bundles.map(() => ' ---: |').join('')}${ref ? ' ---: |' : ''}`,
    ];
    for (const [file, label] of HISTORIES) {
      const history = readHistoryFile(path.join(REPO_ROOT, 'test', 'fixtures', 'histories', `${file}.json`));
      const perBundle = bundles.map(() => [] as number[]);
      for (let b = 0; b < BLOCKS; b++)
        for (const [i, bundle] of bundles.entries()) perBundle[i]?.push(await block(bundle, file, history));
      const cells = perBundle.map((v) => median(v).toFixed(2));
      const [base, mine] = perBundle;
      const ratio = ref && base && mine ? ` ×${median(mine.map((v, i) => v / (base[i] as number))).toFixed(3)} |` : '';
      lines.push(`| ${label} (\`${file}\`) | ${cells.join(' | ')} |${ratio}`);
    }
    lines.push(
      '',
      `Load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; ${Math.round((Date.now() - started) / 1000)} s.`,
    );
    saveResults('workflow-replay-latest.md', lines);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
