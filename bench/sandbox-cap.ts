// What SPUR_PYTHON_MAX_CONCURRENT costs a wide batch: 64 trivial PythonFuncNode executions started
// at once (as an inline batch chunk with mini_batch_size 64 starts its rows), through one worker's
// sandbox, with the cap at 1, 2 (the default on this 2-core host), 4 and 64 (no effective cap).
// Rounds interleave the variants so load from other processes hits them alike; the median rate
// is reported. Writes bench/results/sandbox-cap-latest.md.
// Usage: npx tsx bench/sandbox-cap.ts [rounds=8]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load-config';
import { PythonSandbox } from '../src/nodes/code-execution/python-sandbox';
import { pythonFuncNode } from '../src/nodes/code-execution/python-func-node';
import { REPO_ROOT } from '../scripts/lib/tools';
import { pythonNodeContext } from './lib/python-node-context';
import { msSince, round, summarize } from './lib/stats';

const rounds = Number(process.argv[2] ?? 8);
const ROWS = 64;
const CAPS = [1, 2, 4, 64];
const config = pythonFuncNode.config.parse({
  code: 'return {"y": input_model.src.x + "!"}',
  output_schema: { y: 'string' },
});
async function main(): Promise<void> {
  const settings = loadConfig(process.env).python;
  const sandboxes = new Map(CAPS.map((cap) => [cap, new PythonSandbox({ ...settings, maxConcurrent: cap })]));
  for (const sandbox of sandboxes.values()) {
    const state = await sandbox.state();
    if (!state.ok) throw new Error(state.detail);
  }
  const rates = new Map<number, number[]>(CAPS.map((cap) => [cap, []]));
  for (let r = 0; r < rounds + 1; r++) {
    for (const [cap, sandbox] of sandboxes) {
      const start = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: ROWS }, async (_, i) => {
          const out = await pythonFuncNode.execute?.(config, { src: { x: String(i) } }, pythonNodeContext(sandbox));
          if (out?.y !== `${i}!`) throw new Error(`cap ${cap}: unexpected output ${JSON.stringify(out)}`);
        }),
      );
      if (r > 0) rates.get(cap)?.push(ROWS / (msSince(start) / 1000)); // the first round warms up
    }
  }
  const lines = [
    '# The per-worker sandbox cap on a wide batch',
    '',
    `${new Date().toISOString()} · ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )} · ${rounds} interleaved rounds of ${ROWS} executions started at once · \`npx tsx bench/sandbox-cap.ts\``,
    '',
    '| SPUR_PYTHON_MAX_CONCURRENT | median executions/s | slowest round | fastest round |',
    '|---|---|---|---|',
    ...CAPS.map((cap) => {
      const xs = rates.get(cap) ?? [];
      return `| ${cap} | ${round(summarize(xs).p50, 1)} | ${round(Math.min(...xs), 1)} | ${round(Math.max(...xs), 1)} |`;
    }),
    '',
    'Each execution is a fresh bubblewrap sandbox running a trivial function: the cost is process and namespace start-up, which is CPU-bound, so on this host more than a couple at once only queue on the cores. Without the cap a batch of mini_batch_size 64 would run 64 sandboxes of up to 1 GiB each at once.',
  ];
  const text = `${lines.join('\n')}\n`;
  writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'sandbox-cap-latest.md'), text);
  process.stdout.write(text);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
