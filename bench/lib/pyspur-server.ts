// PySpur itself, for side-by-side benchmarks: pip installs the pinned release into a cached venv
// (bench/pyspur-requirements.txt, from PyPI), `pyspur init` makes a project in a temp folder,
// `pyspur serve --sqlite` serves it on a free loopback port with telemetry off. Never part of
// `npm test`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { REPO_ROOT } from '../../scripts/lib/tools';

export const PYSPUR_VERSION = '0.1.18';
const REQUIREMENTS = path.join(REPO_ROOT, 'bench', 'pyspur-requirements.txt');

export interface PySpurServer {
  baseUrl: string;
  /** Process-group id, for CPU sampling. */
  pid: number;
  handle: ManagedProcess;
  stop(): Promise<void>;
}

const cacheDir = () =>
  process.env.SPUR_TOOLS_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'spur-tools');

/** The venv, installed once per requirements file (its hash names the folder). */
export function ensurePySpurVenv(log: (line: string) => void): string {
  const requirements = readFileSync(REQUIREMENTS);
  const venv = path.join(
    cacheDir(),
    `pyspur-${PYSPUR_VERSION}-${createHash('sha256').update(requirements).digest('hex').slice(0, 12)}`,
  );
  const stamp = path.join(venv, '.installed');
  if (existsSync(stamp)) return venv;
  log(`installing PySpur ${PYSPUR_VERSION} into ${venv} (first time only; a few minutes)`);
  mkdirSync(path.dirname(venv), { recursive: true });
  execFileSync('python3', ['-m', 'venv', '--clear', venv], { stdio: 'inherit' });
  execFileSync(
    path.join(venv, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', '--no-deps', '-r', REQUIREMENTS],
    { stdio: 'inherit' },
  );
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return venv;
}

export async function startPySpur(tmpDir: string, log: (line: string) => void): Promise<PySpurServer> {
  const venv = ensurePySpurVenv(log);
  const project = path.join(tmpDir, 'pyspur-project');
  mkdirSync(project, { recursive: true });
  const bin = path.join(venv, 'bin', 'pyspur');
  execFileSync(bin, ['init', project], {
    stdio: 'ignore',
    env: { ...process.env, DISABLE_ANONYMOUS_TELEMETRY: 'true' },
  });
  appendFileSync(path.join(project, '.env'), '\nDISABLE_ANONYMOUS_TELEMETRY=true\n');
  const port = await freePort();
  const logFile = path.join(tmpDir, 'pyspur.log');
  const handle = spawnManaged({
    name: 'pyspur',
    command: bin,
    args: ['serve', '--sqlite', '--host', '127.0.0.1', '--port', String(port)],
    cwd: project,
    env: { DISABLE_ANONYMOUS_TELEMETRY: 'true', PYTHONUNBUFFERED: '1' },
    logFile,
  });
  const baseUrl = `http://127.0.0.1:${port}/api`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!handle.running) throw new Error(`pyspur exited during start; see ${logFile}`);
    try {
      if ((await fetch(`${baseUrl}/wf/`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await handle.stop('SIGKILL', 0);
      throw new Error(`pyspur did not answer in 120 s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { baseUrl, pid: handle.pid, handle, stop: () => handle.stop('SIGTERM', 10_000) };
}
