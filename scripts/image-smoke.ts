// The image, run: the api and a worker from the built image (`spur:local`) as containers, on the
// production-shaped cluster's PostgreSQL-backed Temporal and FerretDB, with compose's security
// options for each. A workflow with a PythonFuncNode runs through the containerised api on the
// containerised worker (so the bubblewrap sandbox starts inside the container), both health check
// commands pass inside their containers, and both containers stop on SIGTERM within compose's grace
// period with exit code 0. Not part of `npm test`: it needs a container engine and the image.
//
// Usage: npx tsx scripts/image-smoke.ts. Knobs: SPUR_IMAGE (spur:local), CONTAINER_ENGINE (podman),
// CONTAINER_ENGINE_ARGS (global flags, e.g. "--runtime runc"), CONTAINER_RUN_ARGS (extra `run`
// flags, e.g. "--ulimit nofile=20000:20000"). Prints what it checked; exit code 1 on a failure.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildWorkflowBundle } from './build-bundle';
import { buildDist } from './build';
import { type Cluster, startCluster } from './lib/cluster/cluster';
import { freePort, waitForTcp } from './lib/ports';

const IMAGE = process.env.SPUR_IMAGE ?? 'spur:local';
const ENGINE = process.env.CONTAINER_ENGINE ?? 'podman';
const words = (raw: string | undefined) => (raw ?? '').split(/\s+/).filter(Boolean);
const ENGINE_ARGS = words(process.env.CONTAINER_ENGINE_ARGS);
const RUN_ARGS = words(process.env.CONTAINER_RUN_ARGS);
/** docker-compose.yml's security options: every Spur container, and the worker's relaxations for bubblewrap. */
const SECURITY = {
  api: ['--security-opt', 'no-new-privileges'],
  worker: [
    '--security-opt',
    'seccomp=unconfined',
    '--security-opt',
    'apparmor=unconfined',
    '--security-opt',
    'systempaths=unconfined',
    '--security-opt',
    'no-new-privileges',
  ],
};

function engine(args: string[], timeoutMs = 120_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(ENGINE, [...ENGINE_ARGS, ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() });
    });
  });
}

async function must(what: string, args: string[], timeoutMs?: number): Promise<string> {
  const { code, out } = await engine(args, timeoutMs);
  if (code !== 0) throw new Error(`${what}: ${ENGINE} ${args.join(' ')} exited ${code}: ${out.slice(-2000)}`);
  return out;
}

const checks: string[] = [];
const pass = (line: string) => {
  checks.push(line);
  console.log(`ok: ${line}`);
};

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-image-smoke-'));
  const clusterDir = path.join(os.tmpdir(), `spur-image-smoke-cluster-${process.pid}`);
  const names = { api: `spur-smoke-api-${process.pid}`, worker: `spur-smoke-worker-${process.pid}` };
  let cluster: Cluster | undefined;
  let failed = true;
  try {
    await buildDist();
    const bundle = await buildWorkflowBundle(path.join(tmp, 'workflow-bundle.js'));
    // The cluster's servers, with no worker and its apis unused: the containers are the api and worker.
    cluster = await startCluster({ dir: clusterDir, workflowBundle: bundle, workers: 0, apis: 1, logToFiles: true });
    // The cluster's secrets go in a file only this user reads, not on the engine's command line.
    const envFile = path.join(tmp, 'container.env');
    const secrets = ['SPUR_MONGODB_URI', 'SPUR_TEMPORAL_ADDRESS', 'SPUR_SECRET_KEY', 'SPUR_API_KEY_HASHES'];
    writeFileSync(envFile, secrets.map((k) => `${k}=${cluster?.env[k] ?? ''}\n`).join(''), { mode: 0o600 });
    const env = (extra: Record<string, string>) => [
      '--env-file',
      envFile,
      ...Object.entries(extra).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    ];
    const apiPort = await freePort();
    // Host networking: the cluster's servers listen on loopback.
    const run = (name: string, security: string[], extra: Record<string, string>, command: string[]) =>
      must(`start ${name}`, [
        'run',
        '-d',
        '--name',
        name,
        '--network=host',
        ...RUN_ARGS,
        ...security,
        ...env(extra),
        IMAGE,
        ...command,
      ]);
    await run(names.worker, SECURITY.worker, { SPUR_VECTOR_STORE_URI: '/vectors' }, [
      'node',
      'dist/src/processes/worker.js',
    ]);
    await run(names.api, SECURITY.api, { SPUR_PORT: String(apiPort), SPUR_VECTOR_STORE_URI: '/vectors' }, [
      'node',
      'dist/src/processes/api.js',
    ]);
    await waitForTcp('127.0.0.1', apiPort, 60_000);
    pass(`the image's api and worker started (${IMAGE})`);

    const base = `http://127.0.0.1:${apiPort}/api`;
    const headers = { authorization: `Bearer ${cluster.apiKey}`, 'content-type': 'application/json' };
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${base}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${route}: ${res.status} ${text.slice(0, 500)}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const definition = {
      nodes: [
        { id: 'start', title: 'start', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
        {
          id: 'py',
          title: 'py',
          node_type: 'PythonFuncNode',
          config: {
            code: 'import os\nreturn {"y": input_model.start.x + "|uid " + str(os.getuid())}',
            output_schema: { y: 'string' },
          },
        },
        { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { y: 'py.y' } } },
      ],
      links: [
        { source_id: 'start', target_id: 'py' },
        { source_id: 'py', target_id: 'out' },
      ],
    };
    const wf = await post('/wf/', { name: 'image smoke', definition });
    const outputs = await post(`/wf/${wf.id}/run/`, { initial_inputs: { start: { x: 'smoke' } } });
    const y = String((outputs.out as { y?: unknown } | undefined)?.y ?? '');
    if (!y.startsWith('smoke|')) throw new Error(`unexpected outputs: ${JSON.stringify(outputs)}`);
    pass(`a PythonFuncNode ran in the worker container's sandbox (y = ${y}) through the api container`);

    const apiHealth = await must('api health check', [
      'exec',
      names.api,
      'node',
      '-e',
      "fetch('http://127.0.0.1:' + (process.env.SPUR_PORT || 6080) + '/api/health/').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))",
    ]);
    pass(`compose's api health check passes in its container${apiHealth ? `: ${apiHealth}` : ''}`);
    await must('worker health check', ['exec', names.worker, 'node', 'dist/src/processes/worker-health.js'], 60_000);
    pass("compose's worker health check passes in its container");

    // Without the worker's relaxations (the engine's default profiles), the sandbox cannot start:
    // the health check says so rather than the first Python node failing.
    const strict = await engine([
      'run',
      '--rm',
      '--network=host',
      ...RUN_ARGS,
      ...SECURITY.api,
      ...env({}),
      IMAGE,
      'node',
      'dist/src/processes/worker-health.js',
    ]);
    if (strict.code === 0) throw new Error(`the worker health check passed under the default profiles: ${strict.out}`);
    pass(
      `under the engine's default profiles the worker health check fails (exit ${strict.code}): ${strict.out.split('\n').slice(-1)[0]}`,
    );

    for (const name of [names.worker, names.api]) {
      const started = Date.now();
      await must(`stop ${name}`, ['stop', '-t', '30', name], 60_000);
      const code = (await must(`inspect ${name}`, ['inspect', name, '--format', '{{.State.ExitCode}}'])).trim();
      if (code !== '0') throw new Error(`${name} exited ${code} on SIGTERM`);
      pass(
        `${name.replace(/-\d+$/, '')} stopped on SIGTERM in ${((Date.now() - started) / 1000).toFixed(1)} s, exit code 0`,
      );
    }
    failed = false;
  } finally {
    for (const name of Object.values(names)) {
      const logs = await engine(['logs', '--tail', '20', name]);
      if (failed) console.error(`--- ${name}\n${logs.out}`);
      await engine(['rm', '-f', name]);
    }
    await cluster?.stop();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(clusterDir, { recursive: true, force: true });
  }
}

void main().then(
  () => console.log(`image smoke: ${checks.length} checks passed`),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
