// Loopback port helpers for starting servers side by side (tests run several stacks at once).
import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A port that was free on 127.0.0.1 a moment ago, released at once for a server to bind. It is
 * picked below the kernel's ephemeral range, where no outgoing connection takes a local port: one
 * the OS handed out (port 0) could be taken by any connection of the busy suite before the server
 * bound it (seen: a cluster api's metrics port, EADDRINUSE). Picks of parallel tests can still
 * meet; onFreePort retries where a server picks for itself.
 */
export function freePort(): Promise<number> {
  return freePortBelow(ephemeralLow());
}

/** The first port of the kernel's ephemeral range (Linux's default where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 21000 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * A free port below `below` (a store that keeps ports as smallint, such as Temporal's cluster
 * membership table, refuses the OS's ephemeral range), tried at random from 20000 up.
 */
export async function freePortBelow(below: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * (below - 20000));
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free loopback port found between 20000 and ${below}`);
}

function tryConnect(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Resolves once host:port accepts a TCP connection; rejects after timeoutMs. */
export async function waitForTcp(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${host}:${port}`);
    if (await tryConnect(host, port, Math.min(left, 1000))) return;
    await new Promise((r) => setTimeout(r, Math.min(100, Math.max(deadline - Date.now(), 0))));
  }
}

/** Fails fast with a clear message when something already listens on host:port. */
export function assertPortFree(host: string, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(`${what}: ${host}:${port} is not available (${err.code ?? err.message}); is another stack running?`),
      ),
    );
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

/**
 * Starts a server on a free port, again on another one if it dies while starting. freePort()
 * releases the port before the server binds it, and the Temporal dev server picks free ports for
 * its own internal services the same way, so two picks can meet (seen: "bind: address already in
 * use" on the frontend port). A retry on a fresh port closes that race.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (err) {
      if (attempt >= attempts) throw err;
    }
  }
}
