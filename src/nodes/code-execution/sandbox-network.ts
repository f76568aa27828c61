import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { type Launch, slirpCommand } from './sandbox';

/**
 * Destinations the opt-in network refuses inside the sandbox (the kernel answers "prohibited"
 * before a packet leaves): private, shared, link-local (cloud metadata) and multicast ranges.
 * slirp4netns's own 10.0.2.0/24 stays reachable as the more specific route; its host-loopback
 * gateway (10.0.2.2) is refused by slirp4netns itself (--disable-host-loopback).
 */
export const PROHIBITED_RANGES = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'];

const ATTACH_DEADLINE_MS = 10_000;

/**
 * Gives a sandbox started with --info-fd/--block-fd outbound access: slirp4netns (user-mode TCP/IP,
 * no privilege) joins its network namespace, routes to the ranges above are prohibited, then the
 * sandbox is released to run the code. slirp4netns exits with the sandbox or, through its exit fd,
 * with the worker.
 */
export async function attachNetwork(child: ChildProcess, launch: Launch): Promise<void> {
  const info = child.stdio[launch.infoFd ?? -1] as Readable | undefined;
  const release = child.stdio[launch.blockFd ?? -1] as Writable | undefined;
  if (!info || !release) throw new Error('the sandbox was started without its info and block fds');
  const pid = await sandboxPid(info);
  const slirp = spawn(slirpCommand(pid, 3)[0] as string, [...slirpCommand(pid, 3).slice(1), '--exit-fd=4'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    env: {},
    ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
  });
  child.once('exit', () => slirp.kill('SIGKILL'));
  await ready(slirp);
  await prohibitRanges(pid, launch);
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
    slirp.once('exit', (code) => reject(new Error(`slirp4netns exited with code ${code}: ${stderr.trim()}`)));
  }), 'slirp4netns to configure the network');
}

function prohibitRanges(pid: number, launch: Launch): Promise<void> {
  // One `ip -batch` in the sandbox's user and network namespaces, where its owner may add routes.
  const batch = PROHIBITED_RANGES.map((range) => `route add prohibit ${range}`).join('\n');
  return new Promise((resolve, reject) => {
    const ip = execFile('nsenter', [`--target=${pid}`, '--user', '--net', '--preserve-credentials', 'ip', '-batch', '-'], { env: {}, timeout: ATTACH_DEADLINE_MS, uid: launch.uid, gid: launch.gid }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`routes could not be restricted (needs nsenter and ip): ${(stderr || error.message).trim()}`));
      else resolve();
    });
    ip.stdin?.end(`${batch}\n`);
  });
}

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from ${what} within ${ATTACH_DEADLINE_MS / 1000} s`)), ATTACH_DEADLINE_MS)));
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
