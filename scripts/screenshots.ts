// `npm run screenshots`: regenerates docs/screenshots/*.png (the pictures of docs/web-ui.md)
// by running scripts/screenshots/capture.ts inside the test harness (scripts/test.ts).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './lib/tools';

const child = spawn(
  process.execPath,
  [require.resolve('tsx/cli'), path.join(REPO_ROOT, 'scripts', 'test.ts'), 'scripts/screenshots/capture.ts'],
  {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, SPUR_TEST_SKIP_STATIC: '1' },
  },
);
child.on('exit', (code) => process.exit(code ?? 1));
