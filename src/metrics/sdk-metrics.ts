import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

const READ_WITHIN_MS = 5000;

/** Where the Temporal SDK's core exports its metrics in this process, and the read of them. */
export interface SdkMetrics {
  /** For Runtime.install's Prometheus exporter: `127.0.0.1:<port>`. */
  bindAddress: string;
  /** Its text, as the SDK's exporter writes it. */
  read(): Promise<string>;
}

/**
 * The Temporal SDK's own worker metrics (`temporal_*`: slots, polls, task latencies, sticky cache)
 * come from its core, whose Prometheus exporter listens on a port of its own and cannot say which
 * port it got. So a free loopback port is chosen here, never reachable from elsewhere, and read at
 * every scrape of SPUR_METRICS_PORT, whose answer carries both: one target per process.
 */
export async function sdkMetrics(): Promise<SdkMetrics> {
  const port = await freeLoopbackPort();
  return {
    bindAddress: `127.0.0.1:${port}`,
    read: () =>
      new Promise((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/metrics', timeout: READ_WITHIN_MS }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`the SDK's exporter sent nothing in ${READ_WITHIN_MS} ms`)));
        req.on('error', reject);
      }),
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
