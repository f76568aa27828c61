import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolveTool } from '../../scripts/lib/tools';

/** One series as Prometheus's own parser reads it (scripts/prom-parse): a value, or a histogram's count, sum and buckets. */
export interface Series {
  labels: Record<string, string>;
  value?: number;
  count?: number;
  sum?: number;
  buckets?: { le: string; count: number }[];
}

export interface Family {
  name: string;
  /** COUNTER, GAUGE, HISTOGRAM, SUMMARY or UNTYPED. */
  type: string;
  series: Series[];
}

/** A process's metrics at one moment, parsed by expfmt (not by this code's own writer). */
export class Scrape {
  constructor(
    readonly families: Family[],
    readonly text: string,
  ) {}

  family(name: string): Family | undefined {
    return this.families.find((f) => f.name === name);
  }

  /** The series of `name` whose labels include `labels`. */
  series(name: string, labels: Record<string, string> = {}): Series[] {
    return (this.family(name)?.series ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** A counter's or gauge's value summed over the matching series; 0 when there is none yet. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((n, s) => n + (s.value ?? 0), 0);
  }

  /** A histogram's observations summed over the matching series. */
  observations(name: string, labels: Record<string, string> = {}): number {
    return this.series(name, labels).reduce((n, s) => n + (s.count ?? 0), 0);
  }
}

/** GET /metrics on a process's metrics port, parsed by Prometheus's parser. */
export async function scrape(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  return new Scrape(parseExposition(text), text);
}

/**
 * Scrapes until `holds`, for what a process counts just after the write a client sees (or, for the
 * SDK's metrics, after the workflow's end); its last scrape, for the caller to assert on.
 */
export async function scrapeUntil(port: number, holds: (s: Scrape) => boolean, timeoutMs = 60_000): Promise<Scrape> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await scrape(port);
    if (holds(now) || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function parseExposition(text: string): Family[] {
  const out = execFileSync(resolveTool('prom-parse'), [], { input: text, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out.toString('utf8')) as Family[];
}

/** What moved between two scrapes of one process. */
export function moved(before: Scrape, after: Scrape) {
  return {
    value: (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels),
    observations: (name: string, labels: Record<string, string> = {}) =>
      after.observations(name, labels) - before.observations(name, labels),
  };
}
