import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { approvalTokens } from '../../src/approvals/approval-token';
import { createOutputFileWriter } from '../../src/modules/output-files/output-file-writer';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { DEFAULT_WORKSPACE, workspaceScope } from '../../src/db/workspace-scope';
import { createBoundedParser } from '../../src/parsing/parse-pool';
import { finishIngest } from '../../src/rag/collection-records';
import { createDocumentIngest } from '../../src/rag/document-ingest';
import type { TestApi } from '../support/api';
import { AUDIT_COLLECTIONS } from '../support/audit';
import { client, type JsonBody } from '../support/http';
import type { RawRequest } from '../support/raw-http';

/** In every name and secret the seed stores: an answer that carries it leaked stored data. */
export const MARK = `gatemark${randomBytes(4).toString('hex')}`;

/**
 * What no answer, error or recorded request may ever hold: the api's secret key (as configured, and
 * as the hex of its bytes) and its database URI.
 */
export function secretsOf(api: TestApi): string[] {
  const key = api.env.SPUR_SECRET_KEY ?? '';
  const uri = api.env.SPUR_MONGODB_URI ?? '';
  assert.ok(key.length > 20 && uri.startsWith('mongodb://'), 'the test api has a secret key and a database URI');
  return [key, Buffer.from(key, 'base64').toString('hex'), uri, uri.replace(/\/$/, '')];
}

/** Throws when `text` holds one of `secrets`, naming where. */
export function assertNoSecret(where: string, text: string, secrets: string[]): void {
  for (const secret of secrets)
    assert.ok(!text.includes(secret), `${where} holds a secret (${secret.slice(0, 12)}…): ${text.slice(0, 300)}`);
}

/** The ids of one seeded object per route family. */
export interface Seeded {
  workflow: string;
  run: string;
  dataset: string;
  outputFile: string;
  collection: string;
  /** A parsed document of `collection`, and a vector index over it (no worker builds it: it stays processing). */
  document: string;
  index: string;
  user: string;
  session: string;
  suite: string;
  /** An eval run of `suite`, and a comparison of two versions of `workflow` (PENDING: no worker runs them). */
  evalRun: string;
  comparison: string;
  template: Record<string, unknown>;
  schedule: string;
  trigger: string;
  /** The webhook trigger's token: `POST /api/hooks/{token}` starts a run with no key. */
  hookToken: string;
  /** An open pause of `run`, and an approval link's token for it: `/approve/{token}` decides it with no key. */
  pause: string;
  approvalToken: string;
  /** The nonce an approval page's form and cookie carry (the page accepts one the browser already holds). */
  approvalNonce: string;
  /** `http://127.0.0.1:<port>`: the Origin of the server's own pages (the approval form must come from one). */
  origin: string;
  /** A bulk action (it matched no run): the target of its progress and stop routes. */
  runAction: string;
}

/** A form as a browser or client sends it: bytes plus the Content-Type with its boundary. */
export async function multipartBody(
  fields: Record<string, string>,
  files: Record<string, string> = {},
): Promise<{ body: Buffer; type: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, text] of Object.entries(files))
    form.append(name, new Blob([text], { type: 'text/csv' }), `${MARK}.csv`);
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? '' };
}

/** One object of every kind a route family changes, created through the api as its clients do. */
export async function seed(api: TestApi, headers: Record<string, string> = {}): Promise<Seeded> {
  const call = seeding(api, headers);
  const definition = {
    nodes: [{ id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } }],
    links: [],
  };
  const workflow = (await call('POST', '/wf/', { name: `${MARK}-workflow`, definition })).id as string;
  await call('POST', '/env-mgmt/', { name: 'OPENAI_API_KEY', value: `sk-${MARK}-secret` });
  // No worker: the run stays PENDING, a target for cancel and pause routes.
  const run = (await call('POST', `/wf/${workflow}/start_run/`, { initial_inputs: { in: { x: MARK } } })).id as string;
  const datasetForm = new FormData();
  // `x` feeds the workflow's input and `question` is the answer: an eval of the workflow over it starts.
  datasetForm.append('file', new Blob([`question,x\n${MARK},${MARK}\n`], { type: 'text/csv' }), 'rows.csv');
  const dataset = (await call('POST', `/ds/?name=${MARK}-dataset`, datasetForm)).id as string;
  const testFiles = new FormData();
  testFiles.append('workflow_id', workflow);
  testFiles.append('node_id', 'in');
  testFiles.append('files', new Blob([MARK], { type: 'text/plain' }), 'note.txt');
  await call('POST', '/wf/upload_test_files/', testFiles);
  const outputFile = (await createOutputFileWriter(api.models).createOutputFile(null, `${MARK}.jsonl`)).id;
  const collectionForm = new FormData();
  collectionForm.append('metadata', JSON.stringify({ name: `${MARK}-collection` }));
  const collection = (await call('POST', '/rag/collections/', collectionForm)).id as string;
  const document = await ingestedDocument(api, call, collection);
  // No worker builds it: it stays processing, its record and routes real all the same.
  const index = (
    await call('POST', '/rag/indices/', {
      name: `${MARK}-seeded-index`,
      collection_id: collection,
      embedding: { provider: 'openai', model: 'openai/text-embedding-3-small' },
    })
  ).id as string;
  const user = (await call('POST', '/user/', { external_id: `${MARK}-user` })).id as string;
  const session = (await call('POST', '/session/', { workflow_id: workflow, user_id: user })).id as string;
  const suite = (
    await call('POST', '/evals/suites/', {
      name: `${MARK}-suite`,
      dataset_id: dataset,
      answer_column: 'question',
      scorer: { type: 'exact' },
    })
  ).id as string;
  const { evalRun, comparison } = await evals(call, workflow, definition, suite);
  const [template] = (await call('GET', '/templates/')) as Record<string, unknown>[];
  assert.ok(template, 'a template to instantiate');
  // Paused, yearly: it never fires while the test runs, only the probes start its runs.
  const schedule = (
    await call('POST', `/wf/${workflow}/schedules/`, {
      cron: '@yearly',
      initial_inputs: { in: { x: MARK } },
      paused: true,
      note: `${MARK}-schedule`,
    })
  ).id as string;
  const hook = await call('POST', `/wf/${workflow}/triggers/`, { name: `${MARK}-trigger`, rate_per_second: 1000 });
  const hookToken = String(hook.url).split('/hooks/')[1] ?? '';
  assert.ok(hookToken, `a hook URL: ${String(hook.url)}`);
  const links = await approvalLink(api, run);
  const runAction = (
    await call('POST', '/runs/actions/', { filter: { workflow_id: `${MARK}-none` }, action: 'cancel' })
  ).id as string;
  return {
    workflow,
    run,
    dataset,
    outputFile,
    collection,
    document,
    index,
    user,
    session,
    suite,
    evalRun,
    comparison,
    template,
    schedule,
    trigger: hook.id as string,
    hookToken,
    ...links,
    origin: new URL(api.baseUrl).origin,
    runAction,
  };
}

/** A request of the seed, which fails the seed unless it succeeds: its answer's body. */
function seeding(api: TestApi, headers: Record<string, string>) {
  const http = client(api.baseUrl);
  return async (method: string, path: string, body?: JsonBody | FormData) => {
    const res = await http.request(method, path, body, headers);
    assert.ok(res.status < 300, `seeding ${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.body;
  };
}
type Call = ReturnType<typeof seeding>;

/**
 * A document of the collection as the api stores an upload (pending, its ingest job started) and
 * the worker's ingest activities then parse, chunk and settle it: the seed's api has no worker.
 */
async function ingestedDocument(api: TestApi, call: Call, collection: string): Promise<string> {
  const form = new FormData();
  form.append('files', new Blob([`${MARK} is what this document is about.`], { type: 'text/plain' }), `${MARK}.txt`);
  await call('POST', `/rag/collections/${collection}/documents/`, form);
  const [pending] = (await call('GET', `/rag/collections/${collection}/documents/`)) as { id: string }[];
  assert.ok(pending, 'the upload is a document of the collection');
  // The worker runs each activity in the workspace of the workflow that scheduled it: here `default`.
  await workspaceScope.run(DEFAULT_WORKSPACE, async () => {
    await createDocumentIngest(api.models, createBoundedParser(api.config.parsing))(collection, pending.id);
    await finishIngest(api.models, collection, [pending.id], null);
  });
  const [ingested] = (await call('GET', `/rag/collections/${collection}/documents/`)) as {
    status: string;
    chunks: unknown[];
  }[];
  assert.ok(ingested?.status === 'completed' && ingested.chunks.length > 0, `the document is parsed and chunked`);
  return pending.id;
}

/**
 * An eval run of the suite and a comparison of the workflow's two versions, launched as a client
 * launches them (the node moved makes version 2; the run made version 1). No worker runs them.
 */
async function evals(call: Call, workflow: string, definition: { nodes: object[]; links: object[] }, suite: string) {
  const moved = { ...definition, nodes: definition.nodes.map((node) => ({ ...node, coordinates: { x: 400, y: 0 } })) };
  await call('PUT', `/wf/${workflow}/`, { name: `${MARK}-workflow`, definition: moved });
  const asked = { workflow_id: workflow, output_variable: 'in-x', num_samples: 1 };
  const evalRun = (await call('POST', '/evals/launch/', { ...asked, eval_name: suite })).run_id as string;
  const comparison = (await call('POST', '/evals/compare/', { ...asked, suite, versions: [1, 2] })).id as string;
  return { evalRun, comparison };
}

/**
 * An open pause of the run and a link a recipient would have received for it, as a worker records
 * and mints them when a HumanInterventionNode pauses (the seeded run has no worker to reach one).
 */
async function approvalLink(api: TestApi, run: string) {
  const pause = `${run}:in:1`;
  await api.models.Pause.create({
    _id: pause,
    run_id: run,
    node_id: 'in',
    pause_message: `${MARK}-pause`,
    pause_time: new Date(),
    input_data: JSON.stringify({ x: MARK }),
  });
  const approvalToken = approvalTokens(Buffer.from(api.env.SPUR_SECRET_KEY ?? '', 'base64')).mint({
    runId: run,
    pauseId: pause,
    userId: 'email:reviewer@example.test',
    channel: 'email',
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
  });
  return { pause, approvalToken, approvalNonce: randomBytes(32).toString('base64url') };
}

/** What a served token route would change: the runs recorded, and the seeded pause and its run's Temporal history. */
export async function tokenRouteEffects(api: TestApi, s: Seeded) {
  const pause = await api.models.Pause.findById(s.pause).lean();
  const workflowId = runWorkflowId(s.run, api.config.temporal.workflowIdPrefix);
  const history = await api.temporal.workflow.getHandle(workflowId).fetchHistory();
  return {
    runs: await api.models.Run.countDocuments(),
    pauseOpen: pause !== null && pause.resume_time === null && pause.decisions === null,
    runEvents: history.events?.length ?? 0,
  };
}

/** A request of the corpus: its body is JSON, or a multipart form for the routes that take files. */
export interface Probe {
  family: string;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /api, canonical. */
  path: string;
  json?: unknown;
  form?: Record<string, string>;
  /** An event stream: never ends for a PENDING run, so only its status line is awaited. */
  stream?: boolean;
  /** A urlencoded form (the approval page's decision). */
  urlencoded?: Record<string, string>;
  /** Headers the route needs besides the body's type (MCP's Accept). */
  headers?: Record<string, string>;
  /** Served at the server's root, not under /api (the approval links). */
  site?: true;
  /**
   * The URL's token is the credential (a webhook, an approval link): the gate lets the canonical
   * spelling in without a key, and the route answers a token it did not issue with this status.
   */
  tokenRoute?: { wrongToken: number };
}

/** The probe's path as sent: under /api, or at the root for the site's routes. */
export const wirePath = (probe: Probe): string => (probe.site ? probe.path : `/api${probe.path}`);

/**
 * One reading and one state-changing request per route family (per module under src/modules), each
 * naming seeded objects, so that the canonical spelling with a key would read their data or change
 * them. The effect of every state-changing one shows in the database (a new, changed or deleted
 * document), which `databaseDigest` covers.
 */
export function probes(s: Seeded): Probe[] {
  return [
    // First: the workflow's PUT below leaves it without an InputNode, and a hook could then start no run.
    {
      family: 'hooks',
      method: 'POST',
      path: `/hooks/${s.hookToken}`,
      json: { x: `${MARK}-hooked` },
      tokenRoute: { wrongToken: 404 },
    },
    {
      family: 'approvals',
      method: 'GET',
      path: `/approve/${s.approvalToken}`,
      site: true,
      tokenRoute: { wrongToken: 403 },
    },
    {
      family: 'approvals',
      method: 'POST',
      path: `/approve/${s.approvalToken}`,
      urlencoded: { nonce: s.approvalNonce, action: 'APPROVE', comments: MARK },
      headers: { origin: s.origin, cookie: `spur_approval_nonce=${s.approvalNonce}` },
      site: true,
      tokenRoute: { wrongToken: 403 },
    },
    { family: 'workflows', method: 'GET', path: '/wf/' },
    { family: 'workflows', method: 'POST', path: '/wf/', json: { name: `${MARK}-created` } },
    {
      family: 'workflows',
      method: 'PUT',
      path: `/wf/${s.workflow}/`,
      json: { name: `${MARK}-renamed`, definition: { nodes: [], links: [] } },
    },
    { family: 'workflows', method: 'DELETE', path: `/wf/${s.workflow}/` },
    {
      family: 'workflows',
      method: 'POST',
      path: '/wf/upload_test_files/',
      form: { workflow_id: s.workflow, node_id: 'in' },
    },
    { family: 'runs', method: 'GET', path: '/run/' },
    {
      family: 'runs',
      method: 'POST',
      path: `/wf/${s.workflow}/start_run/`,
      json: { initial_inputs: { in: { x: 'y' } } },
    },
    { family: 'runs', method: 'POST', path: `/run/${s.run}/rerun/`, json: { from_node_id: 'in' } },
    { family: 'runs', method: 'GET', path: `/run/${s.run}/status/` },
    { family: 'runs', method: 'GET', path: `/runs/${s.run}/status/` },
    { family: 'schedules', method: 'GET', path: '/schedules/' },
    { family: 'schedules', method: 'GET', path: `/schedules/${s.schedule}/` },
    { family: 'schedules', method: 'GET', path: `/wf/${s.workflow}/schedules/` },
    {
      family: 'schedules',
      method: 'POST',
      path: `/wf/${s.workflow}/schedules/`,
      json: { cron: '@yearly', initial_inputs: { in: { x: 'y' } }, paused: true, note: `${MARK}-made` },
    },
    { family: 'schedules', method: 'POST', path: `/schedules/${s.schedule}/trigger/` },
    { family: 'schedules', method: 'PUT', path: `/schedules/${s.schedule}/`, json: { note: `${MARK}-changed` } },
    { family: 'schedules', method: 'DELETE', path: `/schedules/${s.schedule}/` },
    { family: 'triggers', method: 'GET', path: `/triggers/${s.trigger}/` },
    { family: 'triggers', method: 'GET', path: `/wf/${s.workflow}/triggers/` },
    { family: 'triggers', method: 'POST', path: `/wf/${s.workflow}/triggers/`, json: { name: `${MARK}-made` } },
    { family: 'triggers', method: 'PUT', path: `/triggers/${s.trigger}/`, json: { name: `${MARK}-renamed` } },
    { family: 'triggers', method: 'DELETE', path: `/triggers/${s.trigger}/` },
    { family: 'pauses', method: 'GET', path: '/wf/paused_workflows/' },
    { family: 'pauses', method: 'GET', path: `/wf/pause_history/${s.run}/` },
    {
      family: 'pauses',
      method: 'POST',
      path: `/wf/process_pause_action/${s.run}/`,
      json: { inputs: {}, user_id: `${MARK}-user`, action: 'APPROVE', comments: null },
    },
    { family: 'pauses', method: 'POST', path: `/wf/cancel_workflow/${s.run}/` },
    { family: 'datasets', method: 'GET', path: '/ds/' },
    { family: 'datasets', method: 'DELETE', path: `/ds/${s.dataset}/` },
    { family: 'datasets', method: 'POST', path: `/ds/?name=${MARK}-made`, form: { note: 'x' } },
    { family: 'files', method: 'GET', path: '/files/' },
    { family: 'files', method: 'DELETE', path: `/files/${s.workflow}` },
    { family: 'output-files', method: 'GET', path: '/of/' },
    { family: 'output-files', method: 'DELETE', path: `/of/${s.outputFile}/` },
    { family: 'rag', method: 'GET', path: '/rag/collections/' },
    {
      family: 'rag',
      method: 'POST',
      path: '/rag/collections/',
      form: { metadata: JSON.stringify({ name: `${MARK}-made` }) },
    },
    { family: 'rag', method: 'DELETE', path: `/rag/collections/${s.collection}/` },
    { family: 'env-mgmt', method: 'GET', path: '/env-mgmt/' },
    {
      family: 'env-mgmt',
      method: 'POST',
      path: '/env-mgmt/',
      json: { name: 'ANTHROPIC_API_KEY', value: `${MARK}-planted` },
    },
    { family: 'env-mgmt', method: 'DELETE', path: '/env-mgmt/OPENAI_API_KEY' },
    { family: 'usage', method: 'GET', path: '/usage/prices/' },
    { family: 'usage', method: 'GET', path: '/usage/?group_by=model' },
    {
      family: 'usage',
      method: 'PUT',
      path: '/usage/prices/openai/gpt-4o-mini',
      json: { input_usd_per_mtok: 0, output_usd_per_mtok: 0 },
    },
    { family: 'usage', method: 'GET', path: '/limits/' },
    // Set before it is read: the control expects every probe to be served.
    {
      family: 'usage',
      method: 'PUT',
      path: `/wf/${s.workflow}/budget/`,
      json: { per_run_usd: 1, on_exceed: 'fail' },
    },
    { family: 'usage', method: 'GET', path: `/wf/${s.workflow}/budget/` },
    { family: 'usage', method: 'DELETE', path: `/wf/${s.workflow}/budget/` },
    { family: 'usage', method: 'PUT', path: '/limits/', json: [{ key: 'openai', max_concurrent: 1 }] },
    // Published before it is called: the call starts a run of the seeded workflow.
    {
      family: 'mcp',
      method: 'PUT',
      path: `/wf/${s.workflow}/mcp/`,
      json: { enabled: true, tool_name: `${MARK}_tool` },
    },
    { family: 'mcp', method: 'GET', path: `/wf/${s.workflow}/mcp/` },
    {
      family: 'mcp',
      method: 'POST',
      path: '/mcp',
      json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${MARK}_tool`, arguments: {} } },
      headers: { accept: 'application/json, text/event-stream' },
      // Its answer streams until the run ends (no worker here): only the status line is awaited.
      stream: true,
    },
    {
      family: 'env-mgmt',
      method: 'POST',
      path: '/google/store_token/',
      json: { access_token: `${MARK}-token`, expires_in: 3600 },
    },
    { family: 'sessions', method: 'GET', path: '/session/' },
    {
      family: 'sessions',
      method: 'POST',
      path: '/session/',
      json: { workflow_id: s.workflow, user_id: s.user, external_id: `${MARK}-made` },
    },
    { family: 'sessions', method: 'DELETE', path: `/session/${s.session}/` },
    { family: 'users', method: 'GET', path: '/user/' },
    { family: 'users', method: 'POST', path: '/user/', json: { external_id: `${MARK}-made` } },
    { family: 'users', method: 'PATCH', path: `/user/${s.user}/`, json: { user_metadata: { by: MARK } } },
    { family: 'templates', method: 'GET', path: '/templates/' },
    { family: 'templates', method: 'POST', path: '/templates/instantiate/', json: s.template },
    { family: 'code-convert', method: 'GET', path: `/code_convert/${s.workflow}` },
    // Empty code is refused (400) before anything runs: this api has no worker to run code on.
    { family: 'code-convert', method: 'PUT', path: `/code_convert/${s.workflow}`, json: { code: '' } },
    { family: 'ai', method: 'POST', path: '/ai/generate_schema/', json: { description: 'a schema' } },
    { family: 'evals', method: 'GET', path: '/evals/' },
    { family: 'evals', method: 'POST', path: '/evals/launch/', json: {} },
    { family: 'evals', method: 'GET', path: '/evals/suites/' },
    { family: 'evals', method: 'GET', path: `/evals/suites/${s.suite}/` },
    {
      family: 'evals',
      method: 'POST',
      path: '/evals/suites/',
      json: { name: `${MARK}-made`, dataset_id: s.dataset, answer_column: 'question', scorer: { type: 'exact' } },
    },
    { family: 'evals', method: 'DELETE', path: `/evals/suites/${s.suite}/` },
    { family: 'evals', method: 'GET', path: '/evals/runs/' },
    { family: 'node-types', method: 'GET', path: '/node/supported_types/' },
    ...['/v1/chat/completions', '/api/v1/chat/completions'].map((path) => ({
      family: 'openai-compat',
      method: 'POST' as const,
      path,
      json: { model: s.workflow, messages: [{ role: 'user', content: 'hi' }] },
    })),
    { family: 'callbacks', method: 'GET', path: `/run/${s.run}/callbacks/` },
    { family: 'run events', method: 'GET', path: `/run/${s.run}/events/`, stream: true },
    { family: 'openapi', method: 'GET', path: '/openapi.json' },
  ];
}

/** The probe as bytes on the wire, at `path` (a spelling of `/api` + its path). */
export async function probeRequest(
  probe: Probe,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawRequest> {
  if (probe.form) {
    const { body, type } = await multipartBody(probe.form, {
      [probe.path.startsWith('/ds/') ? 'file' : 'files']: `question\n${MARK}\n`,
    });
    return { method: probe.method, path, headers: { ...headers, 'content-type': type }, body };
  }
  if (probe.urlencoded)
    return {
      method: probe.method,
      path,
      headers: { ...probe.headers, ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(probe.urlencoded).toString(),
    };
  if (probe.json !== undefined)
    return {
      method: probe.method,
      path,
      headers: { ...probe.headers, ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(probe.json),
    };
  return { method: probe.method, path, headers: { ...probe.headers, ...headers } };
}

const upper = (s: string) => s.toUpperCase();
const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;
const escape = (c: string) => `%${c.charCodeAt(0).toString(16)}`;

/** A path segment in other letters, with a letter escaped, a trailing dot or a `;` parameter. */
const respellings = (segment: string) => [
  upper(segment),
  capital(segment),
  `${escape(segment)}${segment.slice(1)}`,
  `${segment.slice(0, -1)}${escape(segment.slice(-1))}`,
  `${segment}.`,
  `${segment};x`,
  `${segment}%3Bx`,
];

/**
 * Other spellings of `/api<path>` that a lenient router, a decoding proxy or a path-normalising
 * client could take for it: case, empty and dot segments (plain and percent-encoded), escaped
 * letters, trailing dots, `;` parameters, backslashes, encoded separators, look-alike Unicode.
 * None may be served: each is either no route at all or refused.
 */
export function pathVariants(path: string): string[] {
  const route = path.slice(1).split(/[/?]/)[0] ?? '';
  // What follows the route's first segment: `/`, `/S1/start_run/`, `?name=x`, or nothing.
  const after = path.slice(1 + route.length);
  const prefixes = [
    'API',
    'Api',
    'aPI',
    '%61pi',
    '%41PI',
    'ap%69',
    'api.',
    'api;x',
    '%EF%BD%81pi',
    '%C1%A1pi',
    'api%00',
    'api%20',
    'api%09',
  ];
  const variants = [
    ...prefixes.map((p) => `/${p}/${route}${after}`),
    ...respellings(route).map((r) => `/api/${r}${after}`),
    `//api/${route}${after}`,
    `/api//${route}${after}`,
    `/x/../api/${route}${after}`,
    `/api/x/../${route}${after}`,
    `/api/./${route}${after}`,
    `/./api/${route}${after}`,
    `/x/%2e%2e/api/${route}${after}`,
    `/x/%2E%2E/api/${route}${after}`,
    `/api/%2e/${route}${after}`,
    `/api%2f${route}${after}`,
    `/api%2F${route}${after}`,
    `/api%5c${route}${after}`,
    `/api\\${route}${after}`,
    `\\api/${route}${after}`,
  ];
  if (after.startsWith('/')) variants.push(`/api/${route}/${after}`);
  // The route's last literal segment in capitals (`/api/wf/S1/START_RUN/`).
  const literal = after
    .split('?')[0]
    ?.split('/')
    .filter((s) => /^[a-z][a-z_]*$/.test(s))
    .at(-1);
  if (literal)
    variants.push(`/api/${route}${after.replace(new RegExp(`/${literal}(?=/|$|\\?)`), `/${upper(literal)}`)}`);
  return [...new Set(variants)];
}

/**
 * Other spellings of a route whose token is its credential (`/api/hooks/<token>`,
 * `/approve/<token>`), which the gate lets in without a key only as spelt: each segment (the
 * token's too) in other letters, escaped, with a trailing dot, `;` parameter, NUL or space; dot
 * and empty segments and encoded separators around and between them. Each is refused, is no
 * route, or reaches the route as a token it never issued.
 */
export function tokenRouteVariants(path: string): string[] {
  const segments = path.slice(1).split('/');
  const respell = (segment: string) => [...respellings(segment), `${segment}%00`, `${segment}%20`];
  const variants = segments.flatMap((segment, i) =>
    respell(segment).map((spelt) => `/${segments.map((s, j) => (j === i ? spelt : s)).join('/')}`),
  );
  for (let i = 1; i < segments.length; i++) {
    const [head, tail] = [segments.slice(0, i).join('/'), segments.slice(i).join('/')];
    for (const separator of ['//', '%2f', '%2F', '%5c', '\\', '/./', '/x/../', '/%2e/'])
      variants.push(`/${head}${separator}${tail}`);
  }
  variants.push(
    `/${path}`,
    `/.${path}`,
    `/x/..${path}`,
    `/x/%2e%2e${path}`,
    `${path}/..`,
    `${path}/.`,
    `${path}/../`,
    `${path}/%2e%2e`,
    `${path}%2f`,
    `${path}%2F..`,
    `${path}\\`,
  );
  return [...new Set(variants)].filter((v) => v !== path);
}

/** Every spelling of the probe's route but its own. */
export function variantsOf(probe: Probe): string[] {
  const api = probe.site ? [] : pathVariants(probe.path);
  const token = probe.tokenRoute ? tokenRouteVariants(wirePath(probe)) : [];
  return [...new Set([...api, ...token])];
}

/**
 * A digest of every document in every collection of the api's database (GridFS files included)
 * but the audit trail's: equal before and after = no request created, changed or deleted anything.
 */
export async function databaseDigest(api: TestApi): Promise<string> {
  const hash = createHash('sha256');
  const collections = (await api.mongo.db!.listCollections().toArray())
    .map((c) => c.name)
    .filter((name) => !AUDIT_COLLECTIONS.includes(name))
    .sort();
  for (const name of collections) {
    const docs = await api.mongo.db!.collection(name).find({}).sort({ _id: 1 }).toArray();
    hash.update(`${name}\n${JSON.stringify(docs)}\n`);
  }
  return hash.digest('hex');
}
