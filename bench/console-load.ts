// The console's first load on the dev stack's shape (api and worker in one process): its bundle's
// size, and the time from navigation to the runs list drawn with 20 runs, in headless Chromium over
// loopback, a fresh browser profile each time (nothing cached). Median of 7 loads.
// Usage: npx tsx bench/console-load.ts (bench/results/console-load-latest.md)
import { statSync } from 'node:fs';
import path from 'node:path';
import { openBrowser } from '../test/support/browser';
import { jsonClient } from './lib/http';
import { saveResults } from './lib/report';
import { runWithStack } from './lib/stack';
import { median } from './lib/stats';
import { REPO_ROOT } from '../scripts/lib/tools';

const LOADS = 7;

runWithStack(
  'spur-bench-console-',
  async (stack) => {
    const api = jsonClient(stack.apiUrl);
    const definition = {
      nodes: [
        { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
        { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { x: 'in.x' } } },
      ],
      links: [{ source_id: 'in', target_id: 'out' }],
    };
    const wf = (await api.post('/wf/', { name: 'console load', definition })).body as { id: string };
    for (let i = 0; i < 20; i++) await api.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: `r${i}` } } });
    const origin = stack.apiUrl.replace(/\/api$/, '');
    const times: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const browser = await openBrowser();
      try {
        const t0 = Date.now();
        await browser.page.goto(`${origin}/console/runs`);
        await browser.page.locator('table.runs tbody tr').nth(19).waitFor();
        times.push(Date.now() - t0);
      } finally {
        await browser.close();
      }
    }
    api.close();
    const sorted = [...times].sort((a, b) => a - b);
    const size = (f: string) => statSync(path.join(REPO_ROOT, 'dist', 'console', f)).size;
    saveResults('console-load-latest.md', [
      `# Console first load — ${new Date().toISOString()}`,
      '',
      `Bundle: console.js ${(size('assets/console.js') / 1024).toFixed(1)} KiB, console.css ${(size('assets/console.css') / 1024).toFixed(1)} KiB, index.html ${size('index.html')} B (uncompressed).`,
      '',
      `From navigation to /console/runs until its table shows 20 runs, headless Chromium, a fresh profile each time, ${LOADS} loads: median ${median(times)} ms (min ${sorted[0]}, max ${sorted.at(-1)} ms).`,
    ]);
  },
  { topology: 'combined' },
);
