import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SANDBOX_ENV, SANDBOX_UID, buildLaunch, type LaunchRequest } from '../../src/nodes/code-execution/sandbox';
import { outermost } from '../../src/nodes/code-execution/python-environment';

// The launch command is the sandbox policy; what it achieves is tested over HTTP (test/e2e/python-sandbox-*).

const request = (over: Partial<LaunchRequest> = {}): LaunchRequest => ({
  python: { executable: '/opt/venv/bin/python', version: '3.11.2', roots: ['/opt/venv', '/usr/lib/python3.11'] },
  bwrap: '/usr/bin/bwrap',
  pythonArgs: ['-I', '-c', 'pass'],
  settings: { sandbox: 'bubblewrap', network: 'none', maxProcesses: 64, scratchMb: 64 },
  workerUid: 1000,
  ...over,
});

/** The values following each occurrence of `flag`. */
const after = (args: string[], flag: string, count = 1) =>
  args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 1 + count).join(' ')] : []));

describe('sandbox launch (bubblewrap)', () => {
  it('unshares every namespace, dies with the worker and keeps the environment empty', () => {
    const { command, args, env, uid } = buildLaunch(request());
    assert.equal(command, '/usr/bin/bwrap');
    for (const flag of [
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
    ])
      assert.ok(args.includes(flag), flag);
    assert.ok(!args.includes('--share-net'));
    assert.deepEqual(env, {}, 'bwrap itself (the sandbox init) gets no environment');
    assert.deepEqual(
      after(args, '--setenv', 2),
      Object.entries(SANDBOX_ENV).map(([k, v]) => `${k} ${v}`),
    );
    assert.equal(uid, undefined, 'an unprivileged worker runs it as itself');
  });

  it('binds only /usr, public /etc files and the Python environment read-only; scratch is sized tmpfs', () => {
    const { args } = buildLaunch(request());
    assert.deepEqual(after(args, '--bind'), [], 'nothing of the host is writable');
    assert.deepEqual(after(args, '--ro-bind', 2), ['/usr /usr', '/opt/venv /opt/venv']);
    assert.deepEqual(
      after(args, '--ro-bind-try', 2).map((b) => b.split(' ')[0]),
      ['/etc/ssl', '/etc/ca-certificates', '/etc/localtime', '/etc/mime.types'],
    );
    assert.deepEqual(after(args, '--tmpfs'), ['/tmp', '/dev/shm']);
    assert.deepEqual(after(args, '--size'), [String(64 * 1024 * 1024), String(64 * 1024 * 1024)]);
    assert.deepEqual(after(args, '--remount-ro'), ['/dev', '/']);
    const command = args.slice(args.indexOf('--') + 1);
    assert.deepEqual(command, [
      'prlimit',
      '--nproc=64',
      `--fsize=${64 * 1024 * 1024}`,
      '--core=0',
      '--',
      '/opt/venv/bin/python',
      '-I',
      '-c',
      'pass',
    ]);
  });

  it('drops to uid 65534 when the worker is root, and attaches the opt-in network through fds', () => {
    const rooted = buildLaunch(request({ workerUid: 0 }));
    assert.deepEqual([rooted.uid, rooted.gid, rooted.sandboxUid], [SANDBOX_UID, SANDBOX_UID, SANDBOX_UID]);
    const online = buildLaunch(
      request({
        settings: { sandbox: 'bubblewrap', network: 'internet', maxProcesses: 64, scratchMb: 64 },
        resolvConf: '/tmp/r/resolv.conf',
      }),
    );
    assert.deepEqual([online.infoFd, online.blockFd], [4, 5]);
    assert.deepEqual(after(online.args, '--info-fd'), ['4']);
    assert.ok(after(online.args, '--ro-bind', 2).includes('/tmp/r/resolv.conf /etc/resolv.conf'));
  });

  it('with a cgroup, the launcher joins it as itself and then execs bwrap (dropping root with setpriv)', () => {
    const joined = buildLaunch(
      request({ workerUid: 0, cgroupProcs: ['/cg/memory/s/cgroup.procs', '/cg/pids/s/cgroup.procs'] }),
    );
    assert.equal(joined.command, '/bin/sh');
    assert.equal(joined.uid, undefined, 'root joins the cgroups; setpriv drops afterwards');
    assert.equal(joined.sandboxUid, SANDBOX_UID, 'the network helper still learns whom the sandbox runs as');
    const rest = joined.args.slice(joined.args.indexOf('--') + 1);
    assert.deepEqual(joined.args.slice(2, joined.args.indexOf('--')), [
      'spur-sandbox',
      '/cg/memory/s/cgroup.procs',
      '/cg/pids/s/cgroup.procs',
    ]);
    assert.deepEqual(rest.slice(0, 6), [
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
      '/usr/bin/bwrap',
    ]);
    const unprivileged = buildLaunch(request({ cgroupProcs: ['/cg/s/cgroup.procs'] }));
    assert.equal(unprivileged.args[unprivileged.args.indexOf('--') + 1], '/usr/bin/bwrap');
  });

  it('the join script writes the pid of the very process it then execs into every file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'spur-join-'));
    const files = [path.join(dir, 'a'), path.join(dir, 'b')];
    const { args } = buildLaunch(request({ cgroupProcs: files }));
    const script = args[1] as string;
    const printed = execFileSync(
      '/bin/sh',
      ['-c', script, 'spur-sandbox', ...files, '--', '/bin/sh', '-c', 'echo $$'],
      { encoding: 'utf8' },
    ).trim();
    for (const file of files) assert.equal(readFileSync(file, 'utf8').trim(), printed);
    rmSync(dir, { recursive: true });
  });

  it('runs the bare interpreter only when the sandbox is off', () => {
    const off = buildLaunch(
      request({ settings: { sandbox: 'off', network: 'none', maxProcesses: 64, scratchMb: 64 } }),
    );
    assert.equal(off.command, '/opt/venv/bin/python');
    assert.equal(off.sandboxed, false);
    assert.deepEqual(off.args, ['-I', '-c', 'pass']);
  });

  it('binds the outermost directories of the Python environment once', () => {
    assert.deepEqual(outermost(['/nonexistent/a/b', '/nonexistent/a', '/nonexistent/c']), [
      '/nonexistent/a',
      '/nonexistent/c',
    ]);
  });
});
