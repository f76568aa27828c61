// What reading paused runs costs as pauses pile up: the median of the inbox (GET
// /wf/paused_workflows/, what PySpur's UI polls) and of one run's pause history (GET
// /wf/pause_history/{run}/) with 0, 5 000 and 20 000 other runs' decided pauses stored, each with two
// approval messages. With BENCH_BASELINE=<commit> the same reads go to that commit's api too, on the
// same servers (a database of its own), for a before/after in one run.
// Usage: npx tsx bench/pause-reads.ts; writes bench/results/pause-reads-latest.md.
import type { MongoClient } from 'mongodb';
import { type ReadTarget, medianRead, withReadTargets } from './lib/read-stacks';
import { saveResults } from './lib/report';

const LEVELS = [0, 5_000, 20_000];
const RUNS = 10;
const READS = 60;

const definition = {
  nodes: [
    { id: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
    { id: 'gate', node_type: 'HumanInterventionNode', config: { message: 'Check' } },
    { id: 'out', node_type: 'OutputNode', config: { output_map: { x: 'in.x' } } },
  ],
  links: [
    { source_id: 'in', target_id: 'gate' },
    { source_id: 'gate', target_id: 'out' },
  ],
};

/** Decided pauses of runs that are not the ones read, with their messages, as a year of approvals leaves them. */
async function storePauses(mongo: MongoClient, db: string, upTo: number): Promise<void> {
  const pauses = mongo.db(db).collection<{ _id: string }>('pauses');
  const deliveries = mongo.db(db).collection<{ _id: string }>('approval_deliveries');
  const have = await pauses.countDocuments({ run_id: { $regex: '^OLD' } });
  const at = new Date();
  for (let from = have; from < upTo; from += 1000) {
    const ids = Array.from({ length: Math.min(1000, upTo - from) }, (_, i) => from + i);
    await pauses.insertMany(
      ids.map((i) => ({
        _id: `OLD${i}:gate:1`,
        run_id: `OLD${i}`,
        node_id: 'gate',
        pause_message: 'Check',
        pause_time: at,
        resume_time: at,
        resume_user_id: 'someone',
        resume_action: 'APPROVE',
        input_data: '{}',
        comments: null,
        decisions: null,
        workspace_id: 'default',
      })),
    );
    await deliveries.insertMany(
      ids.flatMap((i) =>
        ['notify', 'remind'].map((notice) => ({
          _id: `OLD${i}:gate:1:${notice}:1`,
          run_id: `OLD${i}`,
          pause_id: `OLD${i}:gate:1`,
          notice,
          channel: 'email',
          to: 'someone@example.test',
          user_id: 'someone',
          status: 'sent',
          attempts: 1,
          error: null,
          created_at: at,
          updated_at: at,
          workspace_id: 'default',
        })),
      ),
    );
  }
}

const READERS: { name: string; pathOf: (t: ReadTarget, i: number) => string }[] = [
  { name: 'inbox (GET /wf/paused_workflows/)', pathOf: () => '/wf/paused_workflows/' },
  {
    name: 'a run\u2019s pause history (GET /wf/pause_history/{run}/)',
    pathOf: (t, i) => `/wf/pause_history/${t.runIds[i % t.runIds.length]}/`,
  },
];

async function main(): Promise<void> {
  await withReadTargets({ definition, runs: RUNS, until: 'PAUSED' }, async (targets, mongo) => {
    const rows: string[] = [];
    for (const level of LEVELS)
      for (const t of targets) {
        await storePauses(mongo, t.db, level);
        const cells: string[] = [];
        for (const reader of READERS) {
          const read = (i: number) => reader.pathOf(t, i);
          await medianRead(t, READS, read); // warm
          cells.push((await medianRead(t, READS, read)).toFixed(1));
        }
        rows.push(`| ${t.name} | ${level} | ${cells.join(' | ')} |`);
      }
    saveResults('pause-reads-latest.md', [
      `# Reading paused runs as pauses pile up — ${new Date().toISOString()}`,
      '',
      `${RUNS} runs paused at a HumanInterventionNode; ${READS} reads one after another per cell (median), with other runs' decided pauses stored in \`pauses\`, two approval messages each in \`approval_deliveries\`; default topology, dev servers (FerretDB on SQLite).`,
      '',
      `| build | other runs' pauses | ${READERS.map((r) => `${r.name} p50 ms`).join(' | ')} |`,
      `| --- | ---: | ${READERS.map(() => '---:').join(' | ')} |`,
      ...rows,
    ]);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
