// The results document (JSON), a compact stdout table and the markdown summary.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { type CpuUsage, PROCESS_NAMES } from './cpu';
import { type LatencySummary, round } from './stats';

export type PhaseKind = 'engine' | 'baseline-compute' | 'baseline-mongo';

export interface PhaseResult {
  name: string;
  scenario: string;
  kind: PhaseKind;
  concurrency: number;
  runs: number;
  /** The phase stopped at its time cap before its run count. */
  capped: boolean;
  failures: number;
  failureSamples: string[];
  latencyMs: LatencySummary;
  runsPerSecond: number;
  wallSeconds: number;
  cpu: CpuUsage;
  /** p50 of the first and the last tenth of the runs (growth with the database, warm-up). */
  drift: { firstTenthP50: number; lastTenthP50: number };
}

export interface Derived {
  /** (p50 of the 5-node engine run − p50 of the 1-node engine run) / 4 extra nodes, ms. */
  perNodeOverheadMs: Record<string, number>;
  /** Engine p50 / baseline p50 for the same scenario. */
  ratios: Record<string, { vsCompute: number; vsComputeMongo: number }>;
  targets: { name: string; target: string; value: string; ok: boolean }[];
  /** Documents in the benchmark database at the end (FerretDB v1 scans grow with them). */
  documentsAtEnd: Record<string, number>;
}

export interface BenchReport {
  startedAt: string;
  durationSeconds: number;
  stackStartSeconds: number;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    commit: string | null;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
  };
  topology: string;
  settings: Record<string, unknown>;
  /** Requests re-sent once because the api had closed their idle keep-alive connection (not failures). */
  staleKeepAliveRetries: number;
  phases: PhaseResult[];
  derived: Derived;
}

const f = (v: number | undefined, d = 1) => (v !== undefined && Number.isFinite(v) ? round(v, d).toFixed(d) : '–');

function rows(report: BenchReport): string[][] {
  const head = [
    'phase',
    'c',
    'runs',
    'fail',
    'p50',
    'p95',
    'p99',
    'max',
    'runs/s',
    ...PROCESS_NAMES,
    'total',
    'ours %',
    'other %',
  ];
  const body = report.phases.map((p) => [
    `${p.name}${p.capped ? '*' : ''}`,
    String(p.concurrency),
    String(p.runs),
    String(p.failures),
    f(p.latencyMs.p50),
    f(p.latencyMs.p95),
    f(p.latencyMs.p99),
    f(p.latencyMs.max),
    f(p.runsPerSecond),
    ...PROCESS_NAMES.map((c) => f(p.cpu.msPerRun[c], 1)),
    f(p.cpu.msPerRun.total, 1),
    f(p.cpu.percentOfCore.total, 0),
    f(p.cpu.percentOfCore.other, 0),
  ]);
  return [head, ...body];
}

const LEGEND = [
  'Latency in ms, client side (blocking POST /api/wf/{id}/run/). Columns api … total: CPU-ms per run from /proc',
  '(utime+stime incl. reaped children such as python3). "ours %" = all our processes in % of one core over the',
  'phase; "other %" = the rest of the machine meanwhile (noise from other work; 100 % = one core). * = stopped at',
  'its time cap. Sequential phases interleave their scenarios run by run (same database size, same noise).',
];

function derivedLines(report: BenchReport): string[] {
  const { derived } = report;
  const out: string[] = [];
  for (const [scenario, ms] of Object.entries(derived.perNodeOverheadMs))
    out.push(
      `per-node overhead ${scenario}: ${f(ms, 1)} ms = (p50 5-node − p50 1-node InputNode-only) / 4 extra nodes`,
    );
  for (const [scenario, r] of Object.entries(derived.ratios)) {
    out.push(
      `engine/baseline p50 ${scenario}: ×${f(r.vsCompute, 1)} vs pure compute, ×${f(r.vsComputeMongo, 2)} vs compute + same Mongo traffic`,
    );
  }
  for (const p of report.phases.filter((x) => x.kind === 'engine' && x.concurrency === 1)) {
    out.push(
      `drift ${p.name}: p50 first tenth ${f(p.drift.firstTenthP50)} ms → last tenth ${f(p.drift.lastTenthP50)} ms`,
    );
  }
  for (const t of derived.targets) out.push(`target ${t.name} ${t.target}: ${t.value} ${t.ok ? 'OK' : 'MISSED'}`);
  out.push(`requests re-sent after a stale keep-alive connection (not failures): ${report.staleKeepAliveRetries}`);
  out.push(
    `documents at end: ${Object.entries(derived.documentsAtEnd)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  out.push(
    `load average at start ${report.machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}, at end ${report.machine.loadAverageAtEnd.map((x) => x.toFixed(2)).join(' ')} (${report.machine.cpus} cores)`,
  );
  out.push(
    `bench took ${f(report.durationSeconds, 0)} s (stack start ${f(report.stackStartSeconds, 1)} s); ${report.topology}`,
  );
  return out;
}

export function textTable(report: BenchReport): string {
  const all = rows(report);
  const head = all[0] as string[];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...all.slice(1).map(line),
    '',
    ...LEGEND,
    '',
    ...derivedLines(report),
  ].join('\n');
}

export function markdown(report: BenchReport): string {
  const all = rows(report);
  const head = all[0] as string[];
  const table = [head, head.map((_, i) => (i === 0 ? '---' : '---:')), ...all.slice(1)].map(
    (r) => `| ${r.join(' | ')} |`,
  );
  const failures = report.phases
    .filter((p) => p.failureSamples.length > 0)
    .map((p) => `- ${p.name}: ${p.failureSamples.join(' / ')}`);
  return [
    `# Spur benchmark — ${report.startedAt}`,
    '',
    `Machine: ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}, commit ${report.machine.commit ?? 'unknown'}.`,
    `Settings: \`${JSON.stringify(report.settings)}\``,
    '',
    ...table,
    '',
    ...LEGEND,
    '',
    ...derivedLines(report).map((l) => `- ${l}`),
    ...(failures.length ? ['', 'Failures:', ...failures] : []),
    '',
  ].join('\n');
}

/** Prints a benchmark's result lines and keeps them as `bench/results/<name>`. */
export function saveResults(name: string, lines: string[]): void {
  console.log(lines.join('\n'));
  const out = path.join(REPO_ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, name), `${lines.join('\n')}\n`);
}
