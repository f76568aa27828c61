import fc from 'fast-check';
import type { RawRequest } from '../raw-http';
import { type FuzzBody, jsonBody } from './bodies';
import { multipartBody } from './multipart';
import { queryString } from './query';
import type { Pools, TestFileRef } from './real-objects';
import { type FuzzRoute, runsBodyCode, startsRuns } from './routes';
import { encodeForUrl, junkText } from './values';

/** A path parameter: an existing object (picked when the request is sent) or junk. */
export type ParamChoice = { real: number } | { junk: string; mode: 'encoded' | 'raw' };

/** Ways of bending a route's path; none of them adds a word that names another route. */
const PATH_TWEAKS = [
  'none',
  'no-trailing-slash',
  'double-slash',
  'extra-segment',
  'dot-segment',
  'encoded-slash',
] as const;

export interface FuzzCase {
  route: FuzzRoute;
  method: string;
  params: Record<string, ParamChoice>;
  pathTweak: (typeof PATH_TWEAKS)[number];
  query: string | null;
  body: FuzzBody | null;
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

function paramChoice(route: FuzzRoute, name: string): fc.Arbitrary<ParamChoice> {
  const junk = fc.record({ junk: junkText, mode: fc.constantFrom<'encoded' | 'raw'>('encoded', 'encoded', 'raw') });
  // Never an existing workflow on a route that would start a run with a valid body.
  if (name === 'workflow_id' && startsRuns(route)) return junk;
  return fc.oneof({ weight: 1, arbitrary: fc.record({ real: fc.nat() }) }, { weight: 1, arbitrary: junk });
}

function bodyFor(route: FuzzRoute, allValues: Record<string, string[]>): fc.Arbitrary<FuzzBody | null> {
  const values = startsRuns(route) ? { ...allValues, workflow_id: [] } : allValues;
  const fields = runsBodyCode(route) ? route.bodyFields.filter((f) => f !== 'code') : route.bodyFields;
  const json = jsonBody(fields, values);
  const multipart = multipartBody(fields, values);
  if (route.bodyType === 'multipart/form-data')
    return fc.oneof(
      { weight: 6, arbitrary: multipart },
      { weight: 1, arbitrary: json },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  if (route.bodyType === 'application/json')
    return fc.oneof(
      { weight: 6, arbitrary: json },
      { weight: 1, arbitrary: multipart },
      { weight: 1, arbitrary: fc.constant(null) },
    );
  return fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: json });
}

/** One malformed request aimed at one route. `values` are existing ids that bodies may carry. */
export function fuzzCase(routes: FuzzRoute[], values: Record<string, string[]>): fc.Arbitrary<FuzzCase> {
  return fc
    .constantFrom(...routes)
    .chain((route) =>
      fc.record({
        route: fc.constant(route),
        method: fc.oneof(
          { weight: 9, arbitrary: fc.constant(route.method) },
          { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) },
        ),
        params: fc.record(Object.fromEntries(route.pathParams.map((p) => [p, paramChoice(route, p)]))),
        pathTweak: fc.oneof(
          { weight: 10, arbitrary: fc.constant('none' as const) },
          { weight: 2, arbitrary: fc.constantFrom(...PATH_TWEAKS) },
        ),
        query: fc.option(queryString(route.queryParams), { nil: null, freq: 2 }),
        body: bodyFor(route, values),
      }),
    )
    .map((c) => Object.assign(c, { [fc.toStringMethod]: () => summary(c) }));
}

/** A counterexample as one readable line (the bodies run to megabytes). */
function summary(c: FuzzCase): string {
  const cut = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…(${s.length})` : s);
  const params = Object.entries(c.params).map(
    ([k, v]) => `${k}=${'real' in v ? `real#${v.real}` : `${v.mode}:${cut(v.junk)}`}`,
  );
  const body = c.body ? `${c.body.contentType ?? 'no type'} ${cut(c.body.bytes.toString('latin1'))}` : 'no body';
  return `${c.method} ${c.route.path} ${params.join(' ')} tweak=${c.pathTweak} query=${c.query === null ? '-' : cut(c.query)} body=${body}`;
}

/** Ids PySpur-style (`S12`, `DS3`, `R900001`): a run route must never receive one. */
const LOOKS_LIKE_ID = /^[A-Z]{1,3}\d+$/i;

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Resolves a case against the objects that exist now and renders it as bytes on the wire. */
export function toRequest(c: FuzzCase, pools: Pools, testFiles: TestFileRef[]): RawRequest {
  const pairedFile = c.route.pathParams.includes('file_name') ? testFiles : null;
  let path = c.route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const choice = c.params[name];
    if (!choice) return 'missing';
    if ('junk' in choice) {
      const segment = encodeForUrl(choice.junk, choice.mode);
      const guard = startsRuns(c.route) && LOOKS_LIKE_ID.test(safeDecode(segment).trim());
      return guard ? 'no-such-workflow' : segment;
    }
    if (pairedFile && pairedFile.length > 0 && (name === 'file_name' || name === 'workflow_id')) {
      const file = pairedFile[choice.real % pairedFile.length]!;
      return encodeURIComponent(name === 'file_name' ? file.fileName : file.workflowId);
    }
    const pool = pools[name] ?? [];
    return pool.length > 0 ? encodeURIComponent(pool[choice.real % pool.length]!) : 'unknown';
  });
  path = tweak(path, c.pathTweak);
  const headers: Record<string, string> = {};
  if (c.body?.contentType) headers['content-type'] = c.body.contentType;
  return { method: c.method, path: c.query === null ? path : `${path}?${c.query}`, headers, body: c.body?.bytes };
}

function tweak(path: string, how: FuzzCase['pathTweak']): string {
  switch (how) {
    case 'none':
      return path;
    case 'no-trailing-slash':
      return path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    case 'double-slash':
      return path.replace(/\//g, '//');
    case 'extra-segment':
      return `${path.replace(/\/$/, '')}/%2e%2e/x/`;
    case 'dot-segment':
      return path.replace(/^\/([^/]+)\//, '/$1/./../$1/');
    case 'encoded-slash':
      return path.replace(/\/(?!$)/g, '%2F').replace(/^%2F/, '/');
  }
}

/** The seeded ids, by the body field names that carry them, for bodies and multipart fields. */
export function bodyValues(pools: Pools): Record<string, string[]> {
  return { ...pools, node_id: ['input_node', 'output_node'], workflow_id: pools.workflow_id ?? [] };
}
