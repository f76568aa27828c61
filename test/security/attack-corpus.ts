import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createOutputFileWriter } from '../../src/modules/output-files/output-file-writer';
import type { TestApi } from '../support/api';
import { client, type JsonBody } from '../support/http';
import type { RawRequest } from '../support/raw-http';

/** In every name and secret the seed stores: an answer that carries it leaked stored data. */
export const MARK = `gatemark${randomBytes(4).toString('hex')}`;

/** The ids of one seeded object per route family. */
export interface Seeded {
  workflow: string;
  run: string;
  dataset: string;
  outputFile: string;
  collection: string;
  user: string;
  session: string;
  suite: string;
  template: Record<string, unknown>;
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
  const http = client(api.baseUrl);
  const call = async (method: string, path: string, body?: JsonBody | FormData) => {
    const res = await http.request(method, path, body, headers);
    assert.ok(res.status < 300, `seeding ${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.body;
  };
  const definition = {
    nodes: [{ id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } }],
    links: [],
  };
  const workflow = (await call('POST', '/wf/', { name: `${MARK}-workflow`, definition })).id as string;
  await call('POST', '/env-mgmt/', { name: 'OPENAI_API_KEY', value: `sk-${MARK}-secret` });
  // No worker: the run stays PENDING, a target for cancel and pause routes.
  const run = (await call('POST', `/wf/${workflow}/start_run/`, { initial_inputs: { in: { x: MARK } } })).id as string;
  const datasetForm = new FormData();
  datasetForm.append('file', new Blob([`question\n${MARK}\n`], { type: 'text/csv' }), 'rows.csv');
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
  const [template] = (await call('GET', '/templates/')) as Record<string, unknown>[];
  assert.ok(template, 'a template to instantiate');
  return { workflow, run, dataset, outputFile, collection, user, session, suite, template };
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
  /** Headers the route needs besides the body's type (MCP's Accept). */
  headers?: Record<string, string>;
}

/**
 * One reading and one state-changing request per route family (per module under src/modules), each
 * naming seeded objects, so that the canonical spelling with a key would read their data or change
 * them. The effect of every state-changing one shows in the database (a new, changed or deleted
 * document), which `databaseDigest` covers.
 */
export function probes(s: Seeded): Probe[] {
  return [
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
    { family: 'pauses', method: 'GET', path: '/wf/paused_workflows/' },
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
  if (probe.json !== undefined)
    return {
      method: probe.method,
      path,
      headers: { ...probe.headers, ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(probe.json),
    };
  return { method: probe.method, path, headers };
}

const upper = (s: string) => s.toUpperCase();
const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;
const escape = (c: string) => `%${c.charCodeAt(0).toString(16)}`;

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
  const routes = [
    upper(route),
    capital(route),
    `${escape(route)}${route.slice(1)}`,
    `${route.slice(0, -1)}${escape(route.slice(-1))}`,
    `${route}.`,
    `${route};x`,
    `${route}%3Bx`,
  ];
  const variants = [
    ...prefixes.map((p) => `/${p}/${route}${after}`),
    ...routes.map((r) => `/api/${r}${after}`),
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
 * A digest of every document in every collection of the api's database (GridFS files included):
 * equal before and after = no request created, changed or deleted anything.
 */
export async function databaseDigest(api: TestApi): Promise<string> {
  const hash = createHash('sha256');
  const collections = (await api.mongo.db!.listCollections().toArray()).map((c) => c.name).sort();
  for (const name of collections) {
    const docs = await api.mongo.db!.collection(name).find({}).sort({ _id: 1 }).toArray();
    hash.update(`${name}\n${JSON.stringify(docs)}\n`);
  }
  return hash.digest('hex');
}
