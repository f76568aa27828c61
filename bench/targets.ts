// The performance targets in one table, read from the latest results the benches just wrote
// (bench/results/*-latest.md): the last step of `npm run bench`. A missed target points to
// docs/performance.md, which gives its measured reason and what would close it.
// Writes bench/results/targets-latest.md and the numbers block of docs/performance.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { measuredTime, writeBenchBlock } from './lib/performance-doc';
import { saveResults } from './lib/report';
import { REPO_ROOT } from '../scripts/lib/tools';

const read = (name: string) => {
  try {
    return readFileSync(path.join(REPO_ROOT, 'bench', 'results', name), 'utf8');
  } catch {
    return '';
  }
};
const pick = (text: string, re: RegExp) => text.match(re)?.slice(1) ?? [];

interface Target {
  name: string;
  measured: string;
  met: boolean | null;
  source: string;
}

function vsTargets(): Target[] {
  const text = read('vs-pyspur-latest.md');
  const line = text.split('\n').find((l) => l.startsWith('- combined')) ?? '';
  const split = text.split('\n').find((l) => l.startsWith('- split')) ?? '';
  const [p50, p50Met] = pick(line, /p50 ×([\d.]+) of PySpur's \(target ≤ 0\.8: (met|MISSED)\)/);
  const [p99, p99Met] = pick(line, /p99 ×([\d.]+) \(≤ 1\.0: (met|MISSED)\)/);
  const [rate, ratio, best, tputMet] = pick(
    line,
    /throughput at c=20 ([\d.]+) runs\/s, \d+ failed, ×([\d.]+) of PySpur's best with 0 failed \(([^)]*)\)[^(]*\(≥ 2\.5, 0 failed: (met|MISSED)\)/,
  );
  const [cpu, cpuMet] = pick(line, /Spur CPU ([\d.]+) ms per run \(≤ 20: (met|MISSED)\)/);
  const [sp50, sp99, sratio] = [
    pick(split, /p50 ×([\d.]+)/)[0],
    pick(split, /p99 ×([\d.]+)/)[0],
    pick(split, /×([\d.]+) of PySpur's best/)[0],
  ];
  const met = (v: string | undefined) => (v === undefined ? null : v === 'met');
  const src = 'vs-pyspur-latest.md';
  return [
    { name: 'blocking run p50 ≤ 0.8× PySpur (npm run dev)', measured: `×${p50 ?? '?'}`, met: met(p50Met), source: src },
    { name: 'blocking run p99 ≤ 1.0× PySpur', measured: `×${p99 ?? '?'}`, met: met(p99Met), source: src },
    {
      name: 'throughput at c=20 ≥ 2.5× PySpur, 0 failed',
      measured: `${rate ?? '?'} runs/s, ×${ratio ?? '?'} (PySpur ${best ?? '?'})`,
      met: met(tputMet),
      source: src,
    },
    {
      name: '≤ 20 CPU-ms per 5-node run, all processes',
      measured: `${cpu ?? '?'} CPU-ms`,
      met: met(cpuMet),
      source: src,
    },
    {
      name: 'split topology, reported beside',
      measured: `p50 ×${sp50 ?? '?'}, p99 ×${sp99 ?? '?'}, c=20 ×${sratio ?? '?'}`,
      met: null,
      source: src,
    },
  ];
}

function pauseTarget(): Target {
  const combined = read('pause-latest-combined.md');
  const split = read('pause-latest.md');
  const [p50] = pick(combined, /next node RUNNING in the projection: p50 ([\d.]+) ms/);
  const [splitP50] = pick(split, /next node RUNNING in the projection: p50 ([\d.]+) ms/);
  const [verdict] = pick(combined, /target p50 ≤ 25 ms: (met|MISSED)/);
  return {
    name: 'pause action → next node RUNNING p50 ≤ 25 ms',
    measured: `${p50 ?? '?'} ms combined, ${splitP50 ?? '?'} ms split`,
    met: verdict === undefined ? null : verdict === 'met',
    source: 'pause-latest*.md',
  };
}

function batchTarget(): Target {
  const text = read('batch-latest.md');
  const [rows] = pick(text, /\| 1 node \| (\d+) \|/);
  const [verdict] = pick(text, /Target ≥ 5000 rows\/s for 1 node: (met|MISSED)/);
  return {
    name: 'inline batch ≥ 5 000 rows/s, 1 node',
    measured: `${rows ?? '?'} rows/s`,
    met: verdict === undefined ? null : verdict === 'met',
    source: 'batch-latest.md',
  };
}

/** The cost targets bench/run-cost.ts judged: CPU-ms per run over every process, and round trips. */
function costTargets(): Target[] {
  return read('run-cost-latest.md')
    .split('\n')
    .flatMap((line) => {
      const [name, measured, verdict] = pick(line, /^- target (.+?): ([\d.]+) \((met|MISSED)/);
      if (name === undefined) return [];
      return [{ name, measured: measured ?? '?', met: verdict === 'met', source: 'run-cost-latest.md' }];
    });
}

/** "2 cores (AMD EPYC), Node v20…, load average at end …" from the side-by-side run's machine line. */
function machineOf(vsPyspur: string): string {
  const [cores, model, rest] = pick(vsPyspur, /^Machine: (\d+) × ([^,]+), ([^(\n]*?)\s*(?:\(|$)/m);
  return cores === undefined ? 'machine unknown' : `${cores} cores (${model}), ${(rest ?? '').replace(/;/g, ',')}`;
}

function main(): void {
  const targets = [...vsTargets(), pauseTarget(), batchTarget(), ...costTargets()];
  const floor = pick(read('temporal-floor-latest.md'), /\| spurShaped \| [\d.]+ \| [\d.]+ \| ([\d.]+) \| ([\d.]+) \|/);
  const verdict = (t: Target) => (t.met === null ? 'reported' : t.met ? 'met' : 'MISSED: see docs/performance.md');
  const vs = read('vs-pyspur-latest.md');
  writeBenchBlock({
    machine: machineOf(vs),
    measuredAt: measuredTime(vs) ?? 'time unknown',
    targets: targets.map((t) => ({
      name: t.name,
      measured: t.measured,
      verdict: t.met === null ? 'reported' : t.met ? 'met' : 'missed (below)',
    })),
    sections: [
      { title: 'Spur beside PySpur 0.1.18', source: 'vs-pyspur-latest.md', text: vs },
      {
        title: "Temporal's own floor",
        source: 'temporal-floor-latest.md',
        text: read('temporal-floor-latest.md'),
        withIntro: true,
      },
      {
        title: 'Cost of a durable run',
        source: 'run-cost-latest.md',
        text: read('run-cost-latest.md'),
        withIntro: true,
      },
      { title: 'Batch runs, 10 000 rows', source: 'batch-latest.md', text: read('batch-latest.md'), withIntro: true },
      {
        title: 'Live event streams',
        source: 'run-events-latest.md',
        text: read('run-events-latest.md'),
        withIntro: true,
      },
    ],
  });
  saveResults('targets-latest.md', [
    `# Performance targets — ${new Date().toISOString()}`,
    '',
    'From the latest results in bench/results/ (the benches `npm run bench` has just run).',
    '',
    '| target | measured | | from |',
    '| --- | --- | --- | --- |',
    ...targets.map((t) => `| ${t.name} | ${t.measured} | ${verdict(t)} | ${t.source} |`),
    '',
    `Temporal's own floor for a 5-node run's shape (two local activities and a search-attribute upsert, no HTTP, no database): ${floor[0] ?? '?'} CPU-ms, p50 ${floor[1] ?? '?'} ms (temporal-floor-latest.md).`,
  ]);
}

main();
