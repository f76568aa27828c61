import { spawn, type ChildProcess } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { Launch } from './sandbox';

/**
 * Destinations the opt-in network refuses inside the sandbox (the kernel answers "prohibited"
 * before a packet leaves): every IPv4 range the outbound policy refuses (src/outbound/address-policy.ts,
 * with private networks closed): unspecified, private, shared (CGNAT), link-local (cloud metadata),
 * IETF protocol assignments, documentation, benchmarking, 6to4 relay, AS112, AMT, multicast and
 * reserved (broadcast included). Loopback is left out: inside the sandbox it is the sandbox's own
 * `lo`, and the host's is slirp4netns's gateway 10.0.2.2, which slirp4netns refuses itself
 * (--disable-host-loopback). slirp4netns's own 10.0.2.0/24 stays reachable as the more specific route.
 * test/unit/sandbox-network-ranges.test.ts holds this list to the policy.
 */
export const PROHIBITED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

const ATTACH_DEADLINE_MS = 10_000;

/**
 * Runs beside a sandbox that waits on its block fd: finds the user namespace that owns the
 * sandbox's network namespace (NS_GET_USERNS; bubblewrap nests the code's own user namespace one
 * level deeper, where joining the network would be refused), prohibits the ranges above there with
 * `ip` (iproute2), then becomes slirp4netns for that namespace. argv: sandbox pid, sandbox uid (-1:
 * the worker is not root and the helper stays the worker's user), ranges.
 *
 * A root worker starts it as root so that slirp4netns, which runs as the sandbox user, can open the
 * tun device even where /dev/net/tun is root's alone (crw-------, as on some hosts): in a mount
 * namespace of its own the helper puts a copy of the device node owned by the sandbox user over
 * /dev/net, then drops to that user for good. Only this helper's processes see that node.
 */
const ATTACH_HELPER = `
import ctypes, fcntl, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
pid, sandbox_uid, ranges = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def fail(step):
    sys.exit("cannot give the sandbox user the tun device (%s: %s)" % (step, os.strerror(ctypes.get_errno())))

def give_tun(uid):
    try:
        device = os.stat("/dev/net/tun")
    except OSError as e:
        sys.exit("/dev/net/tun is missing (%s): the opt-in network needs the tun device" % e.strerror)
    if not stat.S_ISCHR(device.st_mode):
        sys.exit("/dev/net/tun is not a character device")
    # unshare(CLONE_NEWNS), then make every mount private so nothing leaks back to the host.
    if libc.unshare(0x00020000): fail("unshare")
    if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None): fail("mount --make-rprivate /")
    if libc.mount(b"tmpfs", b"/dev/net", b"tmpfs", 2 | 8, b"mode=0755,size=16k"): fail("mount tmpfs on /dev/net")
    try:
        os.mknod("/dev/net/tun", stat.S_IFCHR | 0o600, device.st_rdev)
        os.chown("/dev/net/tun", uid, uid)
    except OSError as e:
        sys.exit("cannot give the sandbox user the tun device (mknod: %s)" % e.strerror)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/fd stays ours after the uid change

net = os.open("/proc/%s/ns/net" % pid, os.O_RDONLY)
owner = fcntl.ioctl(net, 0xb701)
os.set_inheritable(owner, True)
os.set_inheritable(net, True)
if sandbox_uid >= 0:
    give_tun(sandbox_uid)
child = os.fork()
if child == 0:
    # Joined as the namespace's owner we hold every capability there; exec as a non-root user
    # would drop them, so CAP_NET_ADMIN (12) is made inheritable and ambient for ip.
    if libc.setns(owner, 0x10000000) or libc.setns(net, 0x40000000):
        os._exit(90)
    header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()
    libc.capget(header, data)
    data[2] |= 1 << 12
    if libc.capset(header, data) or libc.prctl(47, 2, 12, 0, 0):
        os._exit(91)
    r, w = os.pipe()
    os.write(w, "".join("route add prohibit %s\\n" % x for x in ranges).encode())
    os.close(w)
    os.dup2(r, 0)
    os.execvp("ip", ["ip", "-batch", "-"])
status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
if status != 0:
    sys.exit("restricting routes failed with status %d" % status)
# slirp4netns runs in the namespace's user namespace (not its network): holding capabilities
# there, --enable-sandbox can give it a mount namespace of its own and drop them again. It joins
# the network namespace through the descriptor held since the start, not /proc/<pid>/ns/net
# again: under load that second look was refused (EACCES) while the sandbox was still starting.
if libc.setns(owner, 0x10000000):
    fail("setns into the sandbox's user namespace")
os.execvp("slirp4netns", ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp", "--ready-fd=3", "--exit-fd=4", "--userns-path=/proc/self/ns/user", "--netns-type=path", "/proc/self/fd/%d" % net, "tap0"])
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
  // Started as the worker's user: a root worker's helper drops to the sandbox user itself.
  const slirp = spawn(
    python,
    [
      '-I',
      '-c',
      ATTACH_HELPER,
      String(pid),
      String(launch.sandboxUid ?? -1),
      ...PROHIBITED_RANGES,
      ...hostAddressRoutes(),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    },
  );
  child.once('exit', () => slirp.kill('SIGKILL'));
  await ready(slirp);
  release.end('1');
}

/**
 * The host's own IPv4 addresses: slirp4netns would otherwise carry a connection to a public
 * address of the host to the host itself (its services on 0.0.0.0). slirp4netns offers no IPv6
 * unless asked, so IPv4 is all there is to close.
 */
export function hostAddressRoutes(interfaces = networkInterfaces()): string[] {
  const addresses = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal);
  return [...new Set(addresses.map((a) => `${a.address}/32`))];
}

function sandboxPid(info: Readable): Promise<number> {
  return withDeadline(
    new Promise((resolve, reject) => {
      let text = '';
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (match) resolve(Number(match[1]));
      });
      info.once('end', () => reject(new Error(`bwrap reported no sandbox pid: ${text}`)));
    }),
    'bwrap to report the sandbox pid',
  );
}

function ready(slirp: ChildProcess): Promise<void> {
  return withDeadline(
    new Promise((resolve, reject) => {
      let stderr = '';
      slirp.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-1000)));
      (slirp.stdio[3] as Readable).once('data', () => resolve());
      slirp.once('error', (error) =>
        reject(new Error(`slirp4netns could not start: ${error.message} (Debian: apt-get install slirp4netns)`)),
      );
      slirp.once('exit', (code) => reject(new Error(`the network helper exited with code ${code}: ${stderr.trim()}`)));
    }),
    'slirp4netns to configure the network',
  );
}

function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`no answer from ${what} within ${ATTACH_DEADLINE_MS / 1000} s`)),
        ATTACH_DEADLINE_MS,
      )),
  );
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
