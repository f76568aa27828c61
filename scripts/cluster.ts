// npm run cluster: the production shape on this machine (docs/production.md): PostgreSQL, the
// Temporal server on it, FerretDB on it, two apis behind nginx, three workers, Prometheus scraping
// them. Ctrl-C stops it. Ports: SPUR_CLUSTER_PORT (the load balancer, 6090), SPUR_CLUSTER_TEMPORAL_PORT
// (7243), SPUR_CLUSTER_POSTGRES_PORT (5442), SPUR_CLUSTER_FERRET_PORT (27027),
// SPUR_CLUSTER_PROMETHEUS_PORT (9190); data in SPUR_CLUSTER_DIR (.data/cluster).
import path from 'node:path';
import { buildDist } from './build';
import { buildWorkflowBundle } from './build-bundle';
import { startCluster } from './lib/cluster/cluster';
import { REPO_ROOT } from './lib/tools';

const portOf = (name: string, fallback: number) => Number(process.env[name] || fallback);

async function main(): Promise<void> {
  const dir = path.resolve(process.env.SPUR_CLUSTER_DIR || path.join(REPO_ROOT, '.data', 'cluster'));
  const started = Date.now();
  const [, workflowBundle] = await Promise.all([
    buildDist(),
    buildWorkflowBundle(path.join(dir, 'workflow-bundle.js')),
  ]);
  const cluster = await startCluster({
    dir,
    workflowBundle,
    ports: {
      loadBalancer: portOf('SPUR_CLUSTER_PORT', 6090),
      temporal: portOf('SPUR_CLUSTER_TEMPORAL_PORT', 7243),
      postgres: portOf('SPUR_CLUSTER_POSTGRES_PORT', 5442),
      ferret: portOf('SPUR_CLUSTER_FERRET_PORT', 27027),
      prometheus: portOf('SPUR_CLUSTER_PROMETHEUS_PORT', 9190),
    },
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    console.log('cluster: stopping');
    void cluster.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  console.log(
    `cluster: PostgreSQL ${cluster.postgres.url}, Temporal ${cluster.temporal.address}, FerretDB ${cluster.ferret.uri}`,
  );
  console.log(
    `cluster: apis ${cluster.apis.map((a) => `127.0.0.1:${a.port}`).join(', ')}, ${cluster.workers.length} workers`,
  );
  console.log(
    `cluster: Prometheus ${cluster.prometheus.url} (HTTP API, e.g. ${cluster.prometheus.url}/api/v1/query?query=sum(spur_runs_started_total)), scraping ${[...cluster.apis, ...cluster.workers].map((p) => `${p.name} :${p.metricsPort}`).join(', ')}`,
  );
  console.log(`cluster: API key ${cluster.apiKey} (send it as Authorization: Bearer <key>); data in ${dir}`);
  console.log(`cluster: started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`cluster ready: ${cluster.apiUrl}`);
}

main().catch((err: unknown) => {
  console.error('cluster: start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
