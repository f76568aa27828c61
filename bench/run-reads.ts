// What reading one run costs as other runs' records pile up: the median of GET /run/{id}/ (the record
// with its tasks and failed attempts, what PySpur's UI polls) with 0, 5 000 and 20 000 failed attempts
// of other runs stored. With BENCH_BASELINE=<commit> the same reads go to that commit's api too, on
// the same servers (a database of its own), for a before/after in one run.
// Usage: npx tsx bench/run-reads.ts; writes bench/results/run-reads-latest.md.
import type { MongoClient } from 'mongodb';
import { medianRead, withReadTargets } from './lib/read-stacks';
import { saveResults } from './lib/report';

const LEVELS = [0, 5_000, 20_000];
const RUNS = 20;
const READS = 100;

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    { id: 'out', node_type: 'OutputNode', config: { output_map: { x: 'in.x' } } },
  ],
  links: [{ source_id: 'in', target_id: 'out' }],
};

/** Failed attempts of runs that are not the ones read, as an installation's history leaves them. */
async function storeAttempts(mongo: MongoClient, db: string, upTo: number): Promise<void> {
  const attempts = mongo.db(db).collection<{ _id: string }>('node_attempts');
  const have = await attempts.countDocuments();
  for (let from = have; from < upTo; from += 1000) {
    const docs = Array.from({ length: Math.min(1000, upTo - from) }, (_, i) => ({
      _id: `OLD${from + i}/node/1`,
      run_id: `OLD${from + i}`,
      node_id: 'node',
      attempt: 1,
      start_time: null,
      end_time: new Date().toISOString(),
      error: 'HTTP 503: the service was busy',
      workspace_id: 'default',
    }));
    await attempts.insertMany(docs);
  }
}

async function main(): Promise<void> {
  await withReadTargets({ definition, runs: RUNS, until: 'COMPLETED' }, async (targets, mongo) => {
    const rows: string[] = [];
    const medians = new Map<string, number[]>();
    for (const level of LEVELS)
      for (const t of targets) {
        await storeAttempts(mongo, t.db, level);
        const read = (i: number) => `/run/${t.runIds[i % t.runIds.length]}/`;
        await medianRead(t, READS, read); // warm
        const p50 = await medianRead(t, READS, read);
        medians.set(t.name, [...(medians.get(t.name) ?? []), p50]);
        rows.push(`| ${t.name} | ${level} | ${p50.toFixed(1)} |`);
      }
    const growth = [...medians].map(
      ([name, [first, , last]]) =>
        `- ${name}: ×${((last ?? Number.NaN) / (first ?? Number.NaN)).toFixed(2)} from 0 to ${LEVELS.at(-1)} attempts stored`,
    );
    saveResults('run-reads-latest.md', [
      `# Reading a run as other runs' records pile up — ${new Date().toISOString()}`,
      '',
      `GET /run/{id}/ of ${RUNS} completed one-node runs, ${READS} reads one after another per row (median), with other runs' failed attempts stored in \`node_attempts\`; default topology, dev servers (FerretDB on SQLite).`,
      '',
      '| build | failed attempts of other runs | p50 ms |',
      '| --- | ---: | ---: |',
      ...rows,
      '',
      ...growth,
    ]);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
