import http from 'node:http';
import type { RawRequest } from './raw-http';
import { MARK, multipartBody, probes, type Seeded } from '../security/attack-corpus';

/**
 * A walk over every operation of the OpenAPI document with real ids and real bodies: what the role
 * matrix and the cross-workspace walk send, so both cover the same routes the same way.
 */

/** One operation of the OpenAPI document, with what it takes. */
export interface Operation {
  method: string;
  /** OpenAPI's path (`{name}` parameters), under /api. */
  path: string;
  permission: string;
  body: 'json' | 'multipart' | 'none';
  /** Required query parameters. */
  query: string[];
  /** Answers an event stream: only its status line is read. */
  stream: boolean;
}

export const opName = (op: Pick<Operation, 'method' | 'path'>) => `${op.method} ${op.path}`;

interface OpenApiOperation {
  'x-spur-permission'?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export function operationsOf(document: { paths: Record<string, Record<string, OpenApiOperation>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
      const types = Object.keys(op.requestBody?.content ?? {});
      ops.push({
        method: method.toUpperCase(),
        path,
        permission: op['x-spur-permission'] ?? '',
        body: types.includes('multipart/form-data') ? 'multipart' : types.length > 0 ? 'json' : 'none',
        query: (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        stream: Object.values(op.responses ?? {}).some((r) => 'text/event-stream' in (r.content ?? {})),
      });
    }
  }
  return ops;
}

/** The seeded objects beyond the attack corpus's: an access user and key to manage, a price to remove. */
export interface Targets extends Seeded {
  accessUser: string;
  accessKey: string;
  /** The seeded test file's stored name (`<stamp>_note.txt`), where a walk needs it to name the real file. */
  testFileName?: string;
}

/**
 * A real id for each path parameter, so a request let through would read or change a real object:
 * the seed's RAG document (parsed as the worker parses it), index and eval runs among them.
 */
export function realValue(name: string, path: string, t: Targets): string {
  const values: Record<string, string> = {
    workflow_id: t.workflow,
    run_id: t.run,
    dataset_id: t.dataset,
    output_file_id: t.outputFile,
    collection_id: t.collection,
    document_id: t.document,
    index_id: t.index,
    user_id: t.user,
    session_id: t.session,
    suite_id: t.suite,
    eval_run_id: t.evalRun,
    comparison_id: t.comparison,
    schedule_id: t.schedule,
    trigger_id: t.trigger,
    token: t.hookToken,
    action_id: t.runAction,
    provider: 'openai',
    name: path.startsWith('/usage/prices/') ? 'gpt-4o-mini' : 'OPENAI_API_KEY',
    file_name: t.testFileName ?? 'note.txt',
    id: path.startsWith('/access/users/')
      ? t.accessUser
      : path.startsWith('/access/workspaces/')
        ? 'default'
        : t.accessKey,
  };
  const value = values[name];
  if (value === undefined) throw new Error(`no seeded value for the path parameter {${name}} of ${path}: add one`);
  return value;
}

/** A value that names nothing: an allowed request with it is answered 404 or 422 and changes nothing seeded. */
const noValue = (name: string) => `${name.replace(/_/g, '')}0nothing`;

/** Bodies of the state-changing operations the attack corpus has no probe for: each would change something. */
function bodyFor(op: Operation, t: Targets): unknown {
  const bodies: Record<string, unknown> = {
    'POST /wf/{workflow_id}/run/': { initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/runv2/': { initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/start_batch_run/': { dataset_id: t.dataset },
    'POST /wf/{workflow_id}/run_partial/': { node_id: 'in', initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/duplicate/': {},
    'POST /runs/actions/': { filter: { workflow_id: t.workflow }, action: 'cancel' },
    'POST /schedules/{schedule_id}/backfill/': {
      start_time: new Date(Date.now() - 3 * 365 * 86_400_000).toISOString(),
      end_time: new Date().toISOString(),
    },
    'POST /code_convert/create_from_code': { code: `# ${MARK}` },
    'POST /ai/generate_message/': { description: MARK, message_type: 'system' },
    // Closed: a switch the control sends parks nothing.
    'POST /limits/breaker/': { key: 'openai', state: 'closed' },
    'POST /limits/fleet/breaker/': { key: 'openai', state: 'closed' },
    'POST /evals/compare/': { suite: t.suite, workflow_id: t.workflow, versions: [1, 1] },
    'POST /rag/indices/': {
      name: `${MARK}-index`,
      collection_id: t.collection,
      embedding: { provider: 'openai', model: 'text-embedding-3-small' },
    },
    'POST /rag/indices/{index_id}/retrieve/': { query: MARK },
    'POST /access/users/': { username: `${MARK}-made`, role: 'admin', password: 'a-long-password-1' },
    'PUT /access/users/{id}/': { role: 'admin' },
    'POST /access/keys/': { name: `${MARK}-made`, role: 'admin', user_id: t.accessUser },
    'POST /access/workspaces/': { name: `${MARK}-workspace` },
    'PUT /access/workspaces/{id}/': { name: `${MARK}-renamed` },
    'PUT /wf/{workflow_id}/retention/': { days: 30 },
  };
  return bodies[opName(op)] ?? {};
}

export interface Probe {
  what: string;
  request: RawRequest;
}

export interface ProbeOptions {
  /** Real ids and a body that would change something; else ids that name nothing and an empty body. */
  real: boolean;
  /**
   * Real ids in an event stream's path too. The role matrix leaves them out: a stream of a real,
   * PENDING run stays open. Another workspace's run must be refused before any stream opens.
   */
  realStreams?: boolean;
  /** Bodies, by operation name, in place of the corpus's or the walk's own (a walk that must get past validation). */
  bodies?: Readonly<Record<string, unknown>>;
}

/**
 * The operation as a request: real ids and a body that would change something (`real`), or ids
 * that name nothing and an empty body (`!real`: an allowed request then touches nothing seeded).
 */
export async function probeOf(
  op: Operation,
  t: Targets,
  options: ProbeOptions,
  headers: Record<string, string>,
): Promise<Probe> {
  const { real, realStreams = false, bodies = {} } = options;
  const fill = (name: string) =>
    encodeURIComponent(real || op.method === 'GET' ? realValue(name, op.path, t) : noValue(name));
  let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    op.stream && !realStreams ? noValue(name) : fill(name),
  );
  const queryValue = (q: string) => (q === 'name' ? `${MARK}-made` : fill(q));
  if (op.query.length > 0) path += `?${op.query.map((q) => `${q}=${queryValue(q)}`).join('&')}`;
  const what = `${op.method} /api${path}`;
  const corpus = probes(t).find((p) => p.method === op.method && p.path === path);
  const request: RawRequest = { method: op.method, path: `/api${path}`, headers: { ...headers, ...corpus?.headers } };
  if (op.body === 'multipart') {
    const fields = real ? (corpus?.form ?? { metadata: JSON.stringify({ name: `${MARK}-made` }) }) : {};
    const field = /\/ds\/|preview_chunk/.test(op.path) ? 'file' : 'files';
    const { body, type } = await multipartBody(fields, real ? { [field]: `question\n${MARK}\n` } : {});
    request.body = body;
    request.headers = { ...request.headers, 'content-type': type };
  } else if (op.body === 'json') {
    request.body = JSON.stringify(real ? (bodies[opName(op)] ?? corpus?.json ?? bodyFor(op, t)) : {});
    request.headers = { ...request.headers, 'content-type': 'application/json' };
  }
  return { what, request };
}

export interface Answer {
  status: number;
  text: string;
}

/** Sends a probe; of an event stream only the status line is awaited (a PENDING run's stream stays open). */
export function send(origin: string, probe: Probe): Promise<Answer> {
  const url = new URL(origin);
  const { request } = probe;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  return new Promise((resolve, reject) => {
    const out = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        if (res.statusCode === 200 && /text\/event-stream/.test(res.headers['content-type'] ?? '')) {
          resolve({ status: 200, text: '' });
          out.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    out.on('error', reject);
    // A hang-free server never hits this: it names the request that hung instead of the test's timeout.
    out.setTimeout(30_000, () => out.destroy(new Error(`${probe.what}: no answer within 30 s`)));
    out.end(body);
  });
}
