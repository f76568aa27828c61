import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DYNAMIC_CONFIG_FILE } from '../../scripts/lib/cluster/temporal-server';
import { TEMPORAL_DEV_OPTIONS } from '../../scripts/lib/servers';
import { POSTGRES_MAX_CONNECTIONS } from '../../scripts/lib/cluster/postgres';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { CONFIG_VARIABLES } from '../../src/config/env';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/contracts/search-attributes';
import {
  COMPOSE_FILE,
  REQUIRED_VALUES as REQUIRED,
  checkCompose,
  envFileFrom,
  loadProject,
  readEnvExample,
  type ComposeProject,
  type ComposeService,
} from './compose-project';

/** The services holding data or running Temporal: on the internal network only, nothing published. */
const PRIVATE_SERVICES = ['mongo', 'postgresql', 'temporal', 'temporal-setup'];

/** Seconds of a compose duration such as "30s" or "1m30s". */
function seconds(duration: string | undefined): number {
  let total = 0;
  for (const [, n, unit] of (duration ?? '').matchAll(/(\d+)(h|m|s)/g))
    total += Number(n) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

describe('deploy: docker-compose.yml, .env.example and the Dockerfile', function () {
  this.timeout(60_000);
  let project: ComposeProject;
  const service = (name: string): ComposeService => {
    const s = project.services[name];
    assert.ok(s, `service ${name} exists`);
    return s;
  };

  before(async () => {
    project = await loadProject();
  });

  it('is a valid compose project once .env holds the required values', () => {
    assert.deepEqual(Object.keys(project.services).sort(), [
      'api',
      'mongo',
      'postgresql',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'worker',
    ]);
  });

  it('refuses to load while .env lacks the secret key, the PostgreSQL password or the MongoDB credentials, naming them', async () => {
    const result = await checkCompose(readEnvExample());
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.match(result.error, /SPUR_SECRET_KEY.*openssl rand -base64 32/);
    assert.match(result.error, /POSTGRES_PASSWORD/);
    assert.match(result.error, /MONGO_ROOT_USERNAME/);
    assert.match(result.error, /MONGO_ROOT_PASSWORD/);
  });

  it('refuses to load without the MongoDB user or password when everything else is set, naming the missing one', async () => {
    for (const missing of ['MONGO_ROOT_USERNAME', 'MONGO_ROOT_PASSWORD'] as const) {
      const values: Record<string, string> = { ...REQUIRED, [missing]: '' };
      const result = await checkCompose(envFileFrom(readEnvExample(), values));
      assert.equal(result.ok, false, `loaded without ${missing}`);
      if (result.ok) continue;
      assert.match(
        result.error,
        new RegExp(`required variable ${missing} is missing a value: set ${missing} in \\.env`),
      );
      const other = missing === 'MONGO_ROOT_USERNAME' ? 'MONGO_ROOT_PASSWORD' : 'MONGO_ROOT_USERNAME';
      assert.doesNotMatch(result.error, new RegExp(`required variable ${other}`), 'only the missing one is named');
    }
  });

  it('runs api and workers from one image; workers scale: no container_name, no published ports', () => {
    const api = service('api');
    const worker = service('worker');
    assert.equal(api.image, worker.image);
    assert.ok(api.build && worker.build, 'both name the image and how to build it, so either can be started first');
    // The files the image compiles (scripts/build.ts into /app/dist): the harness built the same ones.
    assert.deepEqual(api.command, ['node', 'dist/src/processes/api.js']);
    assert.deepEqual(worker.command, ['node', 'dist/src/processes/worker.js']);
    for (const file of [api.command[1], worker.command[1]]) assert.ok(existsSync(path.join(REPO_ROOT, file)), file);
    for (const s of Object.values(project.services))
      assert.equal(s.container_name, undefined, 'fixed names would clash when scaling');
    assert.deepEqual(worker.ports ?? [], []);
    const published = Object.entries(project.services)
      .filter(([, s]) => (s.ports ?? []).length > 0)
      .map(([name]) => name);
    assert.deepEqual(published.sort(), ['api', 'temporal-ui'], 'only the api and the UI reach the host');
    assert.deepEqual(
      api.ports?.map((p) => [p.published, p.target]),
      [['6080', 6080]],
    );
    const ui = service('temporal-ui').ports?.[0];
    assert.deepEqual(
      [ui?.host_ip, ui?.published, ui?.target],
      ['127.0.0.1', '8080', 8080],
      'the UI has no login: loopback by default',
    );
    assert.ok(
      seconds(worker.stop_grace_period) > 10,
      'compose waits longer than the worker drains (SPUR_WORKER_SHUTDOWN_SECONDS, 10 s by default)',
    );
    assert.ok(
      seconds(api.stop_grace_period) > 10 + 5,
      'and longer than the api drains (SPUR_SHUTDOWN_DRAIN_SECONDS + 5 s)',
    );
  });

  it('points api and workers at the compose services, with one secret key and the API keys from .env', () => {
    for (const name of ['api', 'worker']) {
      const env = service(name).environment ?? {};
      assert.equal(
        env.SPUR_MONGODB_URI,
        `mongodb://${REQUIRED.MONGO_ROOT_USERNAME}:${REQUIRED.MONGO_ROOT_PASSWORD}@mongo:27017/?replicaSet=rs0&authSource=admin`,
      );
      assert.equal(env.SPUR_TEMPORAL_ADDRESS, 'temporal:7233');
      assert.equal(env.SPUR_SECRET_KEY, REQUIRED.SPUR_SECRET_KEY);
      assert.equal(env.SPUR_API_KEY_HASHES, REQUIRED.SPUR_API_KEY_HASHES);
    }
    assert.equal(service('api').environment?.SPUR_HOST, '0.0.0.0');
    assert.equal(service('api').environment?.SPUR_PORT, '6080');
  });

  it('starts api and workers after a healthy MongoDB replica set and the search-attribute setup', () => {
    for (const name of ['api', 'worker']) {
      assert.equal(service(name).depends_on?.mongo?.condition, 'service_healthy');
      assert.equal(service(name).depends_on?.['temporal-setup']?.condition, 'service_completed_successfully');
    }
    const mongo = service('mongo');
    assert.match(mongo.image ?? '', /^mongo:7(\.|$)/);
    const [kind, shell, ...args] = mongo.healthcheck?.test ?? [];
    assert.deepEqual([kind, shell], ['CMD', 'mongosh']);
    const script = args[args.indexOf('--eval') + 1];
    assert.match(
      script ?? '',
      /rs\.initiate\(\{ _id: 'rs0', members: \[\{ _id: 0, host: 'mongo:27017' \}\] \}\)/,
      'the member address is the one in the URI',
    );
    assert.doesNotThrow(() => new Function(script ?? ''), 'the mongosh script is valid JavaScript');
  });

  it('runs MongoDB with authentication: a root user from .env, a replica-set keyFile, a health check that logs in', () => {
    const mongo = service('mongo');
    // The image's entrypoint creates this user on the first start and then adds --auth.
    assert.equal(mongo.environment?.MONGO_INITDB_ROOT_USERNAME, REQUIRED.MONGO_ROOT_USERNAME);
    assert.equal(mongo.environment?.MONGO_INITDB_ROOT_PASSWORD, REQUIRED.MONGO_ROOT_PASSWORD);
    // A replica set with auth needs a keyFile; it lives on a named volume, so it survives a re-create.
    assert.deepEqual(mongo.command, ['--replSet', 'rs0', '--bind_ip_all', '--keyFile', '/data/configdb/keyfile']);
    assert.ok(
      (mongo.volumes ?? []).some(
        (v) => v.type === 'volume' && v.source === 'mongo-config' && v.target === '/data/configdb',
      ),
      'the keyFile folder is a named volume',
    );
    // The wrapper that writes the keyFile hands over to the image's entrypoint (test/deploy/mongo-keyfile.test.ts runs it).
    assert.deepEqual(mongo.entrypoint?.slice(0, 2), ['sh', '-c']);
    assert.match(mongo.entrypoint?.[2] ?? '', /exec docker-entrypoint\.sh "\$@"\n$/);
    const args = mongo.healthcheck?.test.slice(2) ?? [];
    const option = (name: string) => args[args.indexOf(name) + 1];
    assert.equal(option('--username'), REQUIRED.MONGO_ROOT_USERNAME);
    assert.equal(option('--password'), REQUIRED.MONGO_ROOT_PASSWORD);
    assert.equal(
      option('--authenticationDatabase'),
      'admin',
      'where the image creates the root user, as authSource in the URI',
    );
  });

  it('keeps MongoDB, PostgreSQL and Temporal on an internal network, publishing no port', () => {
    assert.equal(project.networks?.data?.internal, true, 'the data network has no route out and no published ports');
    assert.ok(
      !project.networks?.default?.internal,
      'the default network carries the published ports and outbound requests',
    );
    const joined = (name: string) => Object.keys(service(name).networks ?? {}).sort();
    for (const name of PRIVATE_SERVICES) {
      assert.deepEqual(joined(name), ['data'], `${name} is on the internal network alone`);
      assert.deepEqual(service(name).ports ?? [], [], `${name} publishes no port`);
    }
    // Those that reach the data services and must also be reached from the host or reach out.
    for (const name of ['api', 'worker', 'temporal-ui']) assert.deepEqual(joined(name), ['data', 'default'], name);
  });

  it('keeps MongoDB and Temporal’s PostgreSQL on named volumes', () => {
    const mount = (name: string) => (service(name).volumes ?? []).map((v) => [v.type, v.source, v.target]);
    assert.deepEqual(mount('mongo'), [
      ['volume', 'mongo-data', '/data/db'],
      ['volume', 'mongo-config', '/data/configdb'],
    ]);
    assert.deepEqual(mount('postgresql'), [['volume', 'temporal-postgres-data', '/var/lib/postgresql/data']]);
    assert.deepEqual(Object.keys(project.volumes ?? {}).sort(), [
      'mongo-config',
      'mongo-data',
      'temporal-postgres-data',
      'vectors',
    ]);
    // api and workers open the same vector store (LanceDB folder) on this host.
    for (const name of ['api', 'worker']) assert.deepEqual(mount(name), [['volume', 'vectors', '/vectors']]);
    const temporal = service('temporal');
    assert.match(temporal.image ?? '', /^temporalio\/auto-setup:/);
    assert.equal(temporal.environment?.DB, 'postgres12', 'SQL visibility with custom search attributes');
    assert.equal(temporal.environment?.POSTGRES_SEEDS, 'postgresql');
    assert.equal(temporal.environment?.POSTGRES_PWD, REQUIRED.POSTGRES_PASSWORD);
    assert.equal(temporal.depends_on?.postgresql?.condition, 'service_healthy');
  });

  it("gives compose's Temporal the dev server's dynamic config, from a file it mounts read-only", () => {
    const temporal = service('temporal');
    const mounted = (temporal.volumes ?? []).find((v) => v.target === '/etc/temporal/config/dynamicconfig/spur.yaml');
    assert.ok(mounted, 'the dynamic config file is mounted');
    assert.equal(mounted.type, 'bind');
    // compose-check loads a copy of the project from a temporary folder: the path below the project is what counts.
    assert.ok(mounted.source.endsWith('/deploy/temporal-dynamic-config.yaml'), mounted.source);
    assert.equal(mounted.read_only, true);
    assert.equal(
      temporal.environment?.DYNAMIC_CONFIG_FILE_PATH,
      'config/dynamicconfig/spur.yaml',
      "relative to the image's /etc/temporal",
    );
    // The file's `key:\n  - value: v` entries, compared with what the dev, test and bench servers get.
    const text = readFileSync(path.join(REPO_ROOT, 'deploy', 'temporal-dynamic-config.yaml'), 'utf8');
    const entries = Object.fromEntries(
      [...text.matchAll(/^([\w.]+):\n\s+- value: (.+)$/gm)].map(([, key, value]) => [
        key,
        JSON.parse(value ?? '') as unknown,
      ]),
    );
    assert.deepEqual(entries, TEMPORAL_DEV_OPTIONS.dynamicConfig);
  });

  it('runs the same Temporal server version and dynamic config file as the cluster (npm run cluster)', () => {
    const temporal = service('temporal');
    const composeVersion = /^temporalio\/auto-setup:(.+)$/.exec(temporal.image ?? '')?.[1];
    const setupVersion = /^TEMPORAL_SERVER_VERSION=v(\S+)/m.exec(
      readFileSync(path.join(REPO_ROOT, 'scripts', 'setup.sh'), 'utf8'),
    )?.[1];
    assert.ok(setupVersion, 'setup.sh names the Temporal server it builds');
    assert.equal(composeVersion, setupVersion);
    const mounted = (temporal.volumes ?? []).find((v) => v.target === '/etc/temporal/config/dynamicconfig/spur.yaml');
    assert.equal(
      path.relative(REPO_ROOT, DYNAMIC_CONFIG_FILE),
      path.join('deploy', path.basename(mounted?.source ?? '')),
    );
  });

  it("gives compose's PostgreSQL the connection limit the cluster runs with", () => {
    assert.deepEqual(service('postgresql').command, ['postgres', '-c', `max_connections=${POSTGRES_MAX_CONNECTIONS}`]);
  });

  it('registers exactly the search attributes that runs set, with the Temporal admin tools', () => {
    const setup = service('temporal-setup');
    assert.match(setup.image ?? '', /^temporalio\/admin-tools:/);
    assert.deepEqual(
      setup.command,
      Object.entries(SEARCH_ATTRIBUTE_TYPES).map(([name, type]) => `${name}=${type}`),
    );
  });

  it('documents in .env.example every variable of src/config/env.ts and every one the compose file reads', () => {
    const example = readEnvExample();
    const documented = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    for (const name of CONFIG_VARIABLES) assert.ok(documented.has(name), `${name} (src/config/env.ts) is documented`);
    // `$${...}` is an escaped dollar (shell variables of the setup script), not compose interpolation.
    const read = new Set(
      [...readFileSync(COMPOSE_FILE, 'utf8').matchAll(/(?<!\$)\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]),
    );
    for (const name of read) assert.ok(documented.has(name), `${name} (docker-compose.yml) is documented`);
  });

  it('builds a glibc Node 20 image with python3 that runs as a non-root user, the api by default', () => {
    const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^FROM node:20-bookworm-slim$/m, 'glibc: the Temporal core bridge does not run on musl');
    assert.match(dockerfile, /apt-get install [^\n]*python3/);
    assert.match(dockerfile, /^USER node$/m);
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    assert.deepEqual(JSON.parse(cmd ?? 'null'), service('api').command, 'compose runs the api the way the image does');
    assert.match(dockerfile, /apt-get install [^\n]*bubblewrap/, 'the Python sandbox');
  });

  it("keeps Docker's default seccomp and AppArmor profiles for the api: it runs no Python", () => {
    assert.deepEqual(service('api').security_opt, ['no-new-privileges:true']);
    for (const name of ['mongo', 'postgresql', 'temporal', 'temporal-setup', 'temporal-ui'])
      assert.equal(service(name).security_opt, undefined, `${name} keeps Docker's defaults`);
  });

  it('grants the workers only what the unprivileged Python sandbox needs: no capability, no root', () => {
    for (const name of ['api', 'worker']) {
      const s = service(name);
      assert.deepEqual(s.cap_add ?? [], []);
      assert.ok(!s.privileged, `${name} is not privileged`);
      assert.equal(s.user, undefined, `${name} runs as the image's user (node)`);
    }
    assert.deepEqual([...(service('worker').security_opt ?? [])].sort(), [
      'apparmor=unconfined',
      'no-new-privileges:true',
      'seccomp=unconfined',
      'systempaths=unconfined',
    ]);
  });

  it("checks each worker's health with a command in its container that starts the sandbox (test/deploy/worker-health.test.ts runs it)", () => {
    const check = service('worker').healthcheck;
    assert.deepEqual(check?.test, ['CMD', 'node', 'dist/src/processes/worker-health.js']);
    // The command waits up to 15 s per check (it exits on its own first); compose must wait longer.
    assert.ok(seconds(check?.timeout) > 15 + 5, `timeout ${check?.timeout}`);
    const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^COPY temporal \.\/temporal$/m, 'the image holds the command');
    assert.match(dockerfile, /^WORKDIR \/app$/m, 'where its relative path resolves');
  });
});
