import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { PROHIBITED_RANGES } from '../../src/nodes/code-execution/sandbox-network';
import { withApi } from '../support/api';
import { client } from '../support/http';
import { runPython } from '../support/python-runs';
import { startUnprivilegedWorker, startWorker } from '../support/worker';

// The Python sandbox's opt-in outbound network (SPUR_PYTHON_NETWORK=internet): slirp4netns opens
// /dev/net/tun, which is root's on most hosts, so this file needs root (scripts/lib/privileged-tests.ts).

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

describe("e2e: the Python sandbox's opt-in outbound network", function () {
  this.timeout(120_000);

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
    // unprivileged worker would simply get its network. (Root, to start that worker: the harness
    // runs this file only as root.)
    if (!tun || (tun.mode & 0o006) === 0o006) this.skip();
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
