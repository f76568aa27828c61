// A mocha root-hook plugin: what each test file cost, so the suite's time can be spent where it
// matters. In parallel mode mocha runs root beforeAll/afterAll once per file, in the worker that
// runs it; the file's api, worker and server processes are its children and, once stopped and
// reaped, count in the worker's children's CPU time. scripts/test.ts prints the heaviest files.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'mocha';
import { COST_FILE, cpuSecondsOf, type FileCost } from '../../scripts/lib/file-costs';

interface Sample {
  at: number;
  self: number;
  children: number;
}

function sample(): Sample {
  const cpu = cpuSecondsOf('self');
  return { at: Date.now(), self: cpu.own, children: cpu.children };
}

let started: Sample | undefined;

function filesOf(context: Context): string {
  const files = (context.test?.parent?.suites ?? []).map((s) => s.file).filter((f): f is string => Boolean(f));
  const unique = [...new Set(files)].map((f) => path.relative(process.cwd(), f));
  return unique.length === 1 ? unique[0]! : `${unique.length} files`;
}

export const mochaHooks = {
  beforeAll(): void {
    started = sample();
  },
  afterAll(this: Context): void {
    const dir = process.env.SPUR_TEST_TMP;
    if (!started || !dir) return;
    const ended = sample();
    const cost: FileCost = {
      file: filesOf(this),
      startedAt: started.at,
      wallSeconds: (ended.at - started.at) / 1000,
      selfCpuSeconds: ended.self - started.self,
      childCpuSeconds: ended.children - started.children,
    };
    appendFileSync(path.join(dir, COST_FILE), `${JSON.stringify(cost)}\n`);
  },
};
