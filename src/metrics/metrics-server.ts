import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics';

export interface MetricsSettings {
  /** SPUR_METRICS_PORT; null: no metrics server (production's default). */
  port: number | null;
  /** SPUR_METRICS_HOST: loopback unless an operator opens it to a scraper elsewhere. */
  host: string;
}

/**
 * Serves this process's metrics in Prometheus's text format at GET /metrics, on a port of its own:
 * never the API's, so a scraper needs no key and an API client never sees them. `extra` adds text
 * another exporter of this process produces (the Temporal SDK's own worker metrics).
 */
export async function serveMetrics(
  settings: MetricsSettings,
  extra: () => Promise<string> = async () => '',
): Promise<{ port: number; close(): Promise<void> } | null> {
  if (settings.port === null) return null;
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found: metrics are at GET /metrics\n');
      return;
    }
    Promise.all([registry.metrics(), extra().catch(() => '')]).then(
      ([own, more]) => res.writeHead(200, { 'content-type': registry.contentType }).end(own + more),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port ?? 0, settings.host, () => resolve());
  });
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    // Scrapers keep their connection open between scrapes: closing cuts those too, a scrape with them.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
