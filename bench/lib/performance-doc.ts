// docs/performance.md holds the latest numbers between two markers; `npm run bench` rewrites that
// block from bench/results/ (its last step, bench/targets.ts), so the doc never drifts from the
// results and the prose around the block stays as written.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';

export const PERFORMANCE_DOC = path.join(REPO_ROOT, 'docs', 'performance.md');
export const BENCH_START =
  '<!-- bench:start (written by npm run bench: edit bench/lib/performance-doc.ts, not this block) -->';
export const BENCH_END = '<!-- bench:end -->';

/** `doc` with the text between the markers replaced by `body`; throws when the markers are missing. */
export function replaceBenchBlock(doc: string, body: string): string {
  const start = doc.indexOf(BENCH_START);
  const end = doc.indexOf(BENCH_END);
  if (start < 0 || end < start) throw new Error(`${PERFORMANCE_DOC} lacks the markers ${BENCH_START} … ${BENCH_END}`);
  return `${doc.slice(0, start + BENCH_START.length)}\n${body.trim()}\n${doc.slice(end)}`;
}

/** The first markdown table of a results file, as its lines (empty when there is none). */
export function firstTable(text: string): string[] {
  const lines = text.split('\n');
  const from = lines.findIndex((l) => l.startsWith('|'));
  if (from < 0) return [];
  const to = lines.findIndex((l, i) => i > from && !l.startsWith('|'));
  return lines.slice(from, to < 0 ? undefined : to);
}

/** One results file's table under a heading, with the file and when it was measured. */
export interface BenchSection {
  title: string;
  /** A file of bench/results/. */
  source: string;
  text: string;
  /** Repeat the file's first paragraph (what was measured, and how loaded the machine was). */
  withIntro?: boolean;
}

export interface BenchSummary {
  /** "2 cores (AMD EPYC), Node v20…": where the numbers were measured. */
  machine: string;
  /** When the side-by-side run the targets come from was measured. */
  measuredAt: string;
  targets: { name: string; measured: string; verdict: string }[];
  sections: BenchSection[];
}

/** "2026-11-24 10:29 UTC" from the first ISO time in a results file. */
export function measuredTime(text: string): string | null {
  const iso = /(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(text);
  return iso ? `${iso[1]} ${iso[2]} UTC` : null;
}

/** The first paragraph after a results file's title, joined into one line. */
export function introOf(text: string): string {
  const paragraphs = text.split(/\n\s*\n/).slice(1);
  const first = paragraphs.find((p) => !p.startsWith('|') && !p.startsWith('#')) ?? '';
  return first
    .split('\n')
    .map((l) => l.trim())
    .join(' ');
}

function renderSection({ title, source, text, withIntro }: BenchSection): string[] {
  const table = firstTable(text);
  if (table.length === 0) return [];
  const at = measuredTime(text);
  const intro = withIntro ? introOf(text) : '';
  return [
    `### ${title}`,
    '',
    ...(intro ? [intro, ''] : []),
    ...table,
    '',
    `From \`bench/results/${source}\`${at ? `, ${at}` : ''}.`,
    '',
  ];
}

export function renderBenchBlock(s: BenchSummary): string {
  return [
    `Measured on ${s.machine}. The targets come from the side-by-side run of ${s.measuredAt}; each table below names its results file and when it was measured.`,
    '',
    '### Targets',
    '',
    '| target | measured | |',
    '| --- | --- | --- |',
    ...s.targets.map((t) => `| ${t.name} | ${t.measured} | ${t.verdict} |`),
    '',
    ...s.sections.flatMap(renderSection),
  ].join('\n');
}

/** Rewrites the block of docs/performance.md; the rest of the file is left as it is. */
export function writeBenchBlock(summary: BenchSummary): void {
  const doc = readFileSync(PERFORMANCE_DOC, 'utf8');
  writeFileSync(PERFORMANCE_DOC, replaceBenchBlock(doc, renderBenchBlock(summary)));
}
