// The cluster's Prometheus (built from its Go module by setup): it scrapes the metrics port of every
// api and worker of the cluster, whose list it reads from a file the cluster rewrites as processes
// come and go (file-based discovery), so a replacement worker is scraped too.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertPortFree } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';
import { resolveTool } from '../tools';

const HOST = '127.0.0.1';

export interface PrometheusOptions {
  /** Where its web API listens (loopback). */
  port: number;
  /** Its configuration, target list and time-series storage. */
  dir: string;
  /** How often every target is scraped (and the target list re-read). */
  scrapeIntervalSeconds: number;
  logFile?: string;
}

/** A process Prometheus scrapes: its name (api-1, worker-2) becomes the `process` label. */
export interface ScrapeTarget {
  process: string;
  port: number;
}

export interface ClusterPrometheus {
  /** `http://127.0.0.1:<port>`: the HTTP API (`/api/v1/query?query=…`); no web UI in this build. */
  url: string;
  handle: ManagedProcess;
  /** Replaces the list of processes scraped; Prometheus picks it up within a scrape interval. */
  setTargets(targets: readonly ScrapeTarget[]): void;
}

function configYaml(o: PrometheusOptions, targetsFile: string): string {
  return `global:
  scrape_interval: ${o.scrapeIntervalSeconds}s
  scrape_timeout: ${o.scrapeIntervalSeconds}s
scrape_configs:
  - job_name: spur
    file_sd_configs:
      - files: ["${targetsFile}"]
        refresh_interval: ${o.scrapeIntervalSeconds}s
`;
}

export async function startPrometheus(options: PrometheusOptions): Promise<ClusterPrometheus> {
  await assertPortFree(HOST, options.port, 'Prometheus');
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const targetsFile = path.join(dir, 'targets.json');
  const setTargets = (targets: readonly ScrapeTarget[]) => {
    const groups = targets.map((t) => ({ targets: [`${HOST}:${t.port}`], labels: { process: t.process } }));
    // Written whole, then renamed: Prometheus never reads half a list.
    writeFileSync(`${targetsFile}.tmp`, JSON.stringify(groups, null, 2));
    renameSync(`${targetsFile}.tmp`, targetsFile);
  };
  setTargets([]);
  const configFile = path.join(dir, 'prometheus.yml');
  writeFileSync(configFile, configYaml(options, targetsFile));
  const url = `http://${HOST}:${options.port}`;
  const handle = spawnManaged({
    name: 'prometheus',
    command: resolveTool('prometheus'),
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=${HOST}:${options.port}`,
      '--log.level=warn',
    ],
    logFile: options.logFile,
  });
  await waitUntilUp(handle, `Prometheus (${url})`, options.logFile, ready(url, Date.now() + 60_000));
  return { url, handle, setTargets };
}

/** Its own readiness endpoint answers 200 once the storage is open and the config loaded. */
async function ready(url: string, deadline: number): Promise<void> {
  for (;;) {
    const ok = await fetch(`${url}/-/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Prometheus at ${url} not ready in 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
