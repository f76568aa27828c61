// The test files that need what a contributor's machine may not give them: root, or a package only
// root can install. The harness (scripts/test.ts) leaves out each file whose need this host does not
// meet and names it, with why, in its last lines: such a file is never reported as passed unrun.
// Root (as CI runs it) meets every need the packages do.
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** What a file may need beyond an ordinary user on Linux. */
export type Need = 'root' | 'postgresql' | 'nginx' | 'chromium' | 'firefox';

/** What this host offers, as the probes found it. */
export type Host = Record<Need, boolean>;

export interface PrivilegedFile {
  /** A file, or a folder ending in `/` (every file in it). */
  path: string;
  needs: readonly Need[];
  /** Why, said to the contributor who cannot run it. */
  why: string;
}

export const PRIVILEGED_FILES: readonly PrivilegedFile[] = [
  {
    path: 'test/e2e/python-sandbox-cgroup.test.ts',
    needs: ['root'],
    why: 'it creates a cgroup per sandbox (cgroup v1 memory and pids, or v2 without delegation) and starts a worker as uid 65534',
  },
  {
    path: 'test/e2e/python-sandbox-network.test.ts',
    needs: ['root'],
    why: "slirp4netns opens /dev/net/tun for the sandbox's network, and a worker is started as uid 65534",
  },
  {
    path: 'test/deploy/mongo-keyfile.test.ts',
    needs: ['root'],
    why: "it hands the keyfile to the mongodb image's user (uid 999), as the container's root does",
  },
  {
    path: 'test/cluster/',
    needs: ['postgresql', 'nginx'],
    why: 'the production-shaped cluster runs PostgreSQL and nginx from the OS packages',
  },
  {
    path: 'test/browser/firefox/',
    needs: ['firefox'],
    why: 'the console is checked in Firefox too, driven over WebDriver BiDi by puppeteer-core',
  },
  {
    path: 'test/browser/',
    needs: ['chromium'],
    why: 'the browser tests drive Chromium through playwright-core',
  },
];

const NEED_SAYS: Record<Need, string> = {
  root: 'needs root',
  postgresql: 'needs PostgreSQL (sudo apt-get install postgresql)',
  nginx: 'needs nginx (sudo apt-get install nginx)',
  chromium: 'needs Chromium (sudo apt-get install chromium, or SPUR_CHROMIUM)',
  firefox: 'needs Firefox (sudo apt-get install firefox-esr, or SPUR_FIREFOX)',
};

export interface NotRun {
  file: string;
  reason: string;
}

function declarationOf(file: string, declared: readonly PrivilegedFile[]): PrivilegedFile | undefined {
  const normal = file.split(path.sep).join('/').replace(/^\.\//, '');
  return declared.find((d) => (d.path.endsWith('/') ? normal.startsWith(d.path) : normal === d.path));
}

/** The files this host can run, and those it cannot with the reason. Pure: the host is given. */
export function splitRunnable(
  files: readonly string[],
  host: Host,
  declared: readonly PrivilegedFile[] = PRIVILEGED_FILES,
): { run: string[]; notRun: NotRun[] } {
  const run: string[] = [];
  const notRun: NotRun[] = [];
  for (const file of files) {
    const declaration = declarationOf(file, declared);
    const unmet = declaration?.needs.filter((need) => !host[need]) ?? [];
    if (declaration && unmet.length > 0)
      notRun.push({ file, reason: `${unmet.map((need) => NEED_SAYS[need]).join(', ')}: ${declaration.why}` });
    else run.push(file);
  }
  return { run, notRun };
}

/** The harness's last lines for the files it left out. */
export function describeNotRun(notRun: readonly NotRun[]): string[] {
  if (notRun.length === 0) return [];
  return [
    `${notRun.length} test file(s) not run on this host, so neither passed nor failed (scripts/lib/privileged-tests.ts):`,
    ...notRun.map(({ file, reason }) => `not run: ${file} — ${reason}`),
  ];
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Debian's PostgreSQL packages put the server in /usr/lib/postgresql/<major>/bin (scripts/lib/cluster/postgres.ts). */
function hasPostgres(): boolean {
  const root = '/usr/lib/postgresql';
  return existsSync(root) && readdirSync(root).some((major) => executable(path.join(root, major, 'bin', 'postgres')));
}

/** What this host offers: the same places the tests and scripts/lib look. */
export function probeHost(): Host {
  return {
    root: process.getuid?.() === 0,
    postgresql: hasPostgres(),
    nginx: executable('/usr/sbin/nginx'),
    chromium: executable(process.env.SPUR_CHROMIUM || '/usr/bin/chromium'),
    firefox: executable(process.env.SPUR_FIREFOX || '/usr/bin/firefox-esr'),
  };
}
