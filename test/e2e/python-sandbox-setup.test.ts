import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { PROHIBITED_RANGES } from '../../src/nodes/code-execution/sandbox-network';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { runPython } from '../support/python-runs';
import { startUnprivilegedWorker, startWorker } from '../support/worker';
import { runWorkerHealth } from '../support/worker-health';

// Secure by default: the worker's health check (src/processes/worker-health.ts, its compose health
// check) says whether the sandbox starts, and Python runs refuse to start without one unless the
// operator says the code is trusted.

/** Live processes named `comm` whose parent is `ppid`, from /proc. */
function childrenNamed(ppid: number, comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === ppid && stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === comm)
        found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** `text` as a literal in a RegExp. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when every folder on the way to `dir` may be entered by any user. */
function canEnterAsOthers(dir: string): boolean {
  for (let at = dir; at !== '/'; at = path.dirname(at)) if ((statSync(at).mode & 0o001) === 0) return false;
  return true;
}

describe('e2e: the Python sandbox in health and when it cannot start', function () {
  this.timeout(120_000);

  async function withApi<T>(env: Record<string, string>, use: (api: TestApi) => Promise<T>): Promise<T> {
    const api = await startApi(env);
    try {
      return await use(api);
    } finally {
      await api.close();
    }
  }

  it("reports a working sandbox in the worker's health check", async () => {
    await withApi({}, async (api) => {
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      assert.match(health.output, /python_sandbox ok \(bubblewrap, network none, Python 3\./);
    });
  });

  it('with nothing set, runs Python nodes sandboxed even where python3 on PATH is in a folder the sandbox user cannot enter', async function () {
    const onPath = execFileSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], {
      encoding: 'utf8',
    }).trim();
    const hidden = process.getuid?.() === 0 && !canEnterAsOthers(path.dirname(onPath));
    await withApi({}, async (api) => {
      const http = client(api.baseUrl);
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      if (hidden)
        assert.match(
          health.output,
          /python3 on PATH cannot be used: .* cannot enter, so \/usr\/bin\/python3 runs user code \(SPUR_PYTHON chooses another\)/,
        );
      else assert.doesNotMatch(health.output, /cannot be used/);
      const worker = await startWorker(api.env);
      try {
        const task = await runPython(
          http,
          'import os, sys\nreturn {"python": os.path.realpath(sys.executable), "uid": os.getuid()}',
        );
        assert.equal(task.status, 'COMPLETED', task.error);
        const out = task.outputs as { python: string; uid: number };
        assert.equal(out.python, hidden ? realpathSync('/usr/bin/python3') : onPath);
      } finally {
        await worker.stop();
      }
    });
  });

  it("fails the worker's health check naming the cause and the setting when the sandbox cannot start", async () => {
    await withApi({}, async (api) => {
      const health = await runWorkerHealth(api.env, { SPUR_PYTHON: '/nonexistent/python3' });
      assert.equal(health.code, 1, health.output);
      assert.match(
        health.output,
        /^worker unhealthy: python_sandbox FAILED: .*\/nonexistent\/python3.*SPUR_PYTHON.*SPUR_PYTHON_SANDBOX=off runs them unsandboxed, for trusted code only/,
      );
    });
  });

  it("refuses a Python environment whose directories hold Spur's source tree or data folder: the worker's health check names it and SPUR_PYTHON", async () => {
    // A venv of the system's interpreter, enterable by the sandbox user (not under /tmp, which is the sandbox's own).
    const venv = mkdtempSync('/var/tmp/spur-venv-');
    chmodSync(venv, 0o755);
    try {
      execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', venv]);
      const python = path.join(venv, 'bin', 'python');
      const sitePackages = execFileSync(
        python,
        ['-I', '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        {
          encoding: 'utf8',
        },
      ).trim();
      await withApi({}, async (api) => {
        // An editable install of the checkout: its .pth puts the source tree on sys.path, so the sandbox would bind it.
        const pth = path.join(sitePackages, 'spur-editable.pth');
        writeFileSync(pth, `${REPO_ROOT}\n`);
        const withSource = await runWorkerHealth(api.env, { SPUR_PYTHON: python });
        assert.equal(withSource.code, 1, withSource.output);
        assert.match(
          withSource.output,
          new RegExp(
            `python_sandbox FAILED: .*would show .*Spur's source tree, ${escape(REPO_ROOT)} \\(the sandbox binds ${escape(REPO_ROOT)}\\).* to user code; set SPUR_PYTHON`,
          ),
        );
        rmSync(pth);

        // The data folder made inside the environment's folder.
        const dataDir = path.join(venv, 'spur-data');
        const withData = await runWorkerHealth(api.env, { SPUR_PYTHON: python, SPUR_DATA_DIR: dataDir });
        assert.equal(withData.code, 1, withData.output);
        assert.match(
          withData.output,
          new RegExp(
            `python_sandbox FAILED: .*would show the data folder \\(SPUR_DATA_DIR\\), ${escape(dataDir)} \\(the sandbox binds ${escape(realpathSync(venv))}\\) to user code; set SPUR_PYTHON`,
          ),
        );

        // The same environment holding neither runs.
        const clean = await runWorkerHealth(api.env, { SPUR_PYTHON: python });
        assert.equal(clean.code, 0, clean.output);
        assert.match(clean.output, /python_sandbox ok \(bubblewrap/);
      });
    } finally {
      rmSync(venv, { recursive: true, force: true });
    }
  });

  it('fails Python runs with the cause when bubblewrap is missing, and never runs them unsandboxed', async () => {
    await withApi({}, async (api) => {
      // A worker whose PATH has no bwrap (the interpreter is given as an absolute path).
      const worker = await startWorker(api.env, { PATH: '/nonexistent', SPUR_PYTHON: '/usr/bin/python3' });
      try {
        const task = await runPython(client(api.baseUrl), 'return {"ran": 1}');
        assert.equal(task.status, 'FAILED');
        assert.match(
          task.error ?? '',
          /The Python sandbox cannot start \(SPUR_PYTHON_SANDBOX=bubblewrap\): bwrap is not installed \(Debian: apt-get install bubblewrap\)/,
        );
      } finally {
        await worker.stop();
      }
    });
  });

  it("runs unsandboxed only when told to, and the worker's health check says the code must be trusted", async () => {
    await withApi({ SPUR_PYTHON_SANDBOX: 'off' }, async (api) => {
      const http = client(api.baseUrl);
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      assert.match(health.output, /python_sandbox ok \(off \(SPUR_PYTHON_SANDBOX=off\).*trusted code only/);
      const worker = await startWorker(api.env);
      try {
        const task = await runPython(http, 'import socket\nreturn {"interfaces": len(socket.if_nameindex())}');
        assert.equal(task.status, 'COMPLETED', task.error);
        assert.ok((task.outputs as { interfaces: number }).interfaces > 1, 'the host network: no sandbox');
      } finally {
        await worker.stop();
      }
    });
  });

  it("opts into outbound network: a tap device, every range the outbound policy refuses and the host's own addresses prohibited, the host loopback unreachable, slirp4netns under seccomp in its own mount namespace", async () => {
    await withApi({ SPUR_PYTHON_NETWORK: 'internet' }, async (api) => {
      const http = client(api.baseUrl);
      const worker = await startWorker(api.env);
      try {
        // No packet to a non-loopback address: the routing table is read, and only 127.0.0.1 is dialled.
        const code = `
import socket
s = socket.socket()
s.settimeout(5)
try:
    s.connect(("127.0.0.1", ${new URL(api.baseUrl).port}))
    api = "connected"
except OSError as e:
    api = type(e).__name__
routes = [line.split("\\t") for line in open("/proc/net/route").read().strip().split("\\n")[1:]]
prohibited = sorted("%s/%s" % (socket.inet_ntoa(bytes.fromhex(r[1])[::-1]), bin(int(r[7], 16)).count("1")) for r in routes if int(r[3], 16) & 0x200)
default = [r[0] for r in routes if r[1] == "00000000" and not int(r[3], 16) & 0x200]
import time
time.sleep(1)  # the test looks at slirp4netns meanwhile
return {"interfaces": [n for _, n in socket.if_nameindex()], "api": api, "prohibited": prohibited, "default": default}`;
        // A first run takes the worker's start-up probe (whose short-lived slirp4netns might be
        // seen before it confines itself) out of the way; then the last look at each slirp4netns
        // is taken while the code runs.
        assert.equal((await runPython(http, 'return {}')).status, 'COMPLETED');
        const seen = new Map<number, { seccomp: string; mountNs: string }>();
        let running = true;
        const watching = (async () => {
          while (running) {
            for (const pid of childrenNamed(worker.process.pid, 'slirp4netns')) {
              try {
                seen.set(pid, {
                  seccomp: /^Seccomp:\s*(\d)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '',
                  mountNs: readlinkSync(`/proc/${pid}/ns/mnt`),
                });
              } catch {
                // it ended while we looked
              }
            }
            await new Promise((r) => setTimeout(r, 50));
          }
        })();
        const task = await runPython(http, code).finally(() => (running = false));
        await watching;
        assert.equal(task.status, 'COMPLETED', task.error);
        const out = task.outputs as { interfaces: string[]; api: string; prohibited: string[]; default: string[] };
        assert.deepEqual(out.interfaces, ['lo', 'tap0']);
        assert.deepEqual(out.default, ['tap0']);
        assert.equal(out.api, 'ConnectionRefusedError', "the api's port on the host loopback");
        // Every range the outbound policy refuses (the unit test holds the list to the policy).
        for (const range of PROHIBITED_RANGES)
          assert.ok(out.prohibited.includes(range), `${range} in ${out.prohibited.join(' ')}`);
        const hostAddresses = Object.values(networkInterfaces())
          .flatMap((l) => l ?? [])
          .filter((a) => a.family === 'IPv4' && !a.internal)
          .map((a) => `${a.address}/32`);
        for (const own of hostAddresses)
          assert.ok(out.prohibited.includes(own), `the host's own ${own} in ${out.prohibited.join(' ')}`);
        // slirp4netns itself runs with seccomp (mode 2: filter) in a mount namespace of its own.
        assert.ok(seen.size > 0, 'slirp4netns was seen while the code ran');
        for (const s of seen.values()) {
          assert.equal(s.seccomp, '2');
          assert.notEqual(s.mountNs, readlinkSync('/proc/self/ns/mnt'));
        }
      } finally {
        await worker.stop();
      }
    });
  });
  it("tells why the opt-in network cannot start where the worker's user may not open /dev/net/tun", async function () {
    const tun = statSync('/dev/net/tun', { throwIfNoEntry: false });
    // Only meaningful where the device is root's alone, as on the hosts this fixes; elsewhere the
    // unprivileged worker would simply get its network.
    if (process.getuid?.() !== 0 || !tun || (tun.mode & 0o006) === 0o006) this.skip();
    await withApi({ SPUR_PYTHON_NETWORK: 'internet' }, async (api) => {
      const worker = await startUnprivilegedWorker(api.env);
      try {
        const task = await runPython(client(api.baseUrl), 'return {"ran": 1}');
        assert.equal(task.status, 'FAILED');
        assert.match(
          task.error ?? '',
          /SPUR_PYTHON_NETWORK=internet\) needs the tun device, and the worker's user \(uid 65534\) cannot open \/dev\/net\/tun \(EACCES\); run the worker as root, or give its user read and write access/,
        );
      } finally {
        await worker.stop();
      }
    });
  });
});
