import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Launch } from './sandbox';

/**
 * Destinations the opt-in network refuses inside the sandbox (the kernel answers "prohibited"
 * before a packet leaves): private, shared, link-local (cloud metadata) and multicast ranges.
 * slirp4netns's own 10.0.2.0/24 stays reachable as the more specific route; its host-loopback
 * gateway (10.0.2.2) is refused by slirp4netns itself (--disable-host-loopback).
 */
export const PROHIBITED_RANGES = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'];

const ATTACH_DEADLINE_MS = 10_000;

/**
 * Runs (as the sandbox's user) beside a sandbox that waits on its block fd: finds the user namespace
 * that owns the sandbox's network namespace (bubblewrap nests the code one level deeper, so it is
 * the parent of the code's: NS_GET_PARENT), prohibits the ranges above there with `ip`, then
 * becomes slirp4netns for that namespace. argv: sandbox pid, then the prohibited ranges.
 */
const ATTACH_HELPER = `
import fcntl, os, subprocess, sys
pid, ranges = sys.argv[1], sys.argv[2:]
owner = fcntl.ioctl(os.open("/proc/%s/ns/user" % pid, os.O_RDONLY), 0xb702)
os.set_inheritable(owner, True)
userns, netns = "/proc/self/fd/%d" % owner, "/proc/%s/ns/net" % pid
batch = "".join("route add prohibit %s\\n" % r for r in ranges)
subprocess.run(["nsenter", "--user=" + userns, "--net=" + netns, "--preserve-credentials", "ip", "-batch", "-"], input=batch.encode(), pass_fds=(owner,), check=True)
os.execvp("slirp4netns", ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback", "--ready-fd=3", "--exit-fd=4", "--userns-path=" + userns, "--netns-type=path", netns, "tap0"])
`;

/**
 * Gives a sandbox started with --info-fd/--block-fd outbound access: slirp4netns (user-mode TCP/IP,
 * no privilege) serves its network namespace, routes to the ranges above are prohibited, then the
 * sandbox is released to run the code. slirp4netns exits with the sandbox or, through its exit fd,
 * with the worker.
 */
export async function attachNetwork(child: ChildProcess, launch: Launch, python: string): Promise<void> {
  const info = child.stdio[launch.infoFd ?? -1] as Readable | undefined;
  const release = child.stdio[launch.blockFd ?? -1] as Writable | undefined;
  if (!info || !release) throw new Error('the sandbox was started without its info and block fds');
  const pid = await sandboxPid(info);
  const slirp = spawn(python, ['-I', '-c', ATTACH_HELPER, String(pid), ...PROHIBITED_RANGES], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
  });
  child.once('exit', () => slirp.kill('SIGKILL'));
  await ready(slirp);
  release.end('1');
}

function sandboxPid(info: Readable): Promise<number> {
  return withDeadline(new Promise((resolve, reject) => {
    let text = '';
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    info.once('end', () => reject(new Error(`bwrap reported no sandbox pid: ${text}`)));
  }), 'bwrap to report the sandbox pid');
}

function ready(slirp: ChildProcess): Promise<void> {
  return withDeadline(new Promise((resolve, reject) => {
    let stderr = '';
    slirp.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-1000)));
    (slirp.stdio[3] as Readable).once('data', () => resolve());
    slirp.once('error', (error) => reject(new Error(`slirp4netns could not start: ${error.message} (Debian: apt-get install slirp4netns)`)));
    slirp.once('exit', (code) => reject(new Error(`the network helper exited with code ${code}: ${stderr.trim()}`)));
  }), 'slirp4netns to configure the network');
}

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from ${what} within ${ATTACH_DEADLINE_MS / 1000} s`)), ATTACH_DEADLINE_MS)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
