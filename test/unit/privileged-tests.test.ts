import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PRIVILEGED_FILES, describeNotRun, splitRunnable, type Host } from '../../scripts/lib/privileged-tests';
import { REPO_ROOT } from '../../scripts/lib/tools';

// Which files the harness (scripts/test.ts) leaves out on a host, and what it says about them.

const everything: Host = { root: true, postgresql: true, nginx: true, chromium: true, firefox: true };
const contributor: Host = { ...everything, root: false };

const FILES = [
  'test/cluster/host-loss.test.ts',
  'test/e2e/python-sandbox-cgroup.test.ts',
  'test/e2e/python-sandbox-network.test.ts',
  'test/e2e/python-sandbox-setup.test.ts',
  'test/deploy/mongo-keyfile.test.ts',
  'test/browser/login.test.ts',
  'test/unit/dag.test.ts',
];

describe('the test files a host cannot run', () => {
  it('as root with the OS packages, runs every file', () => {
    assert.deepEqual(splitRunnable(FILES, everything), { run: FILES, notRun: [] });
  });

  it('as an ordinary user, leaves out exactly the files that need root, saying so and why', () => {
    const { run, notRun } = splitRunnable(FILES, contributor);
    assert.deepEqual(
      notRun.map((n) => n.file),
      [
        'test/e2e/python-sandbox-cgroup.test.ts',
        'test/e2e/python-sandbox-network.test.ts',
        'test/deploy/mongo-keyfile.test.ts',
      ],
    );
    for (const { reason } of notRun) assert.match(reason, /^needs root: .+$/);
    assert.match(notRun[0]?.reason ?? '', /cgroup/);
    assert.deepEqual(run, [
      'test/cluster/host-loss.test.ts',
      'test/e2e/python-sandbox-setup.test.ts',
      'test/browser/login.test.ts',
      'test/unit/dag.test.ts',
    ]);
  });

  it('leaves out the cluster without PostgreSQL or nginx and the browser folder without Chromium, naming each missing package', () => {
    const { notRun } = splitRunnable(FILES, { ...everything, postgresql: false, nginx: false, chromium: false });
    assert.deepEqual(notRun, [
      {
        file: 'test/cluster/host-loss.test.ts',
        reason:
          'needs PostgreSQL (sudo apt-get install postgresql), needs nginx (sudo apt-get install nginx): the production-shaped cluster runs PostgreSQL and nginx from the OS packages',
      },
      {
        file: 'test/browser/login.test.ts',
        reason:
          'needs Chromium (sudo apt-get install chromium, or SPUR_CHROMIUM): the browser tests drive Chromium through playwright-core',
      },
    ]);
  });

  it('leaves out the Firefox folder without Firefox alone: it needs Firefox, not Chromium', () => {
    const files = ['test/browser/firefox/console-firefox.test.ts', 'test/browser/login.test.ts'];
    assert.deepEqual(splitRunnable(files, { ...everything, chromium: false }).run, [files[0]]);
    assert.deepEqual(splitRunnable(files, { ...everything, firefox: false }), {
      run: [files[1]],
      notRun: [
        {
          file: files[0],
          reason:
            'needs Firefox (sudo apt-get install firefox-esr, or SPUR_FIREFOX): the console is checked in Firefox too, driven over WebDriver BiDi by puppeteer-core',
        },
      ],
    });
  });

  it('knows a file however it is named on the command line', () => {
    const named = ['./test/deploy/mongo-keyfile.test.ts', path.join('test', 'browser', 'editor.test.ts')];
    assert.deepEqual(splitRunnable(named, { ...contributor, chromium: false }).run, []);
  });

  it('names every file it left out, one line each, as the last lines', () => {
    const lines = describeNotRun(splitRunnable(FILES, contributor).notRun);
    assert.equal(lines.length, 4);
    assert.match(lines[0] ?? '', /^3 test file\(s\) not run on this host, so neither passed nor failed/);
    assert.match(
      lines[1] ?? '',
      /^not run: test\/e2e\/python-sandbox-cgroup\.test\.ts — needs root: it creates a cgroup per sandbox/,
    );
    assert.deepEqual(describeNotRun([]), []);
  });

  it('declares only files and folders that exist (a moved file would otherwise run, and fail, unprivileged)', () => {
    for (const declared of PRIVILEGED_FILES)
      assert.ok(existsSync(path.join(REPO_ROOT, declared.path)), `${declared.path} does not exist`);
  });
});
