/** One operation of the api as its own OpenAPI document describes it: what the fuzzer aims at. */
export interface FuzzRoute {
  method: string;
  /** OpenAPI form, relative to the server url: `/wf/{workflow_id}/`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyType: 'application/json' | 'multipart/form-data' | null;
  /** Top-level property names of the body schema, so generated bodies use the fields handlers read. */
  bodyFields: string[];
}

interface SchemaObject {
  $ref?: string;
  properties?: Record<string, unknown>;
  allOf?: SchemaObject[];
}

interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** Every operation of the document; routes added later are fuzzed without touching the test. */
export function routesOf(doc: OpenApiDocument): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const params = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      const bodyType =
        'multipart/form-data' in content
          ? 'multipart/form-data'
          : 'application/json' in content
            ? 'application/json'
            : null;
      const schema = bodyType ? content[bodyType]?.schema : undefined;
      routes.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyType,
        bodyFields: schema ? propertyNames(schema, doc, 0) : [],
      });
    }
  }
  return routes;
}

function propertyNames(schema: SchemaObject, doc: OpenApiDocument, depth: number): string[] {
  if (depth > 5) return [];
  if (schema.$ref) {
    const target = doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')];
    return target ? propertyNames(target, doc, depth + 1) : [];
  }
  const own = Object.keys(schema.properties ?? {});
  const inherited = (schema.allOf ?? []).flatMap((s) => propertyNames(s, doc, depth + 1));
  return [...new Set([...own, ...inherited])];
}

/**
 * Routes that start Temporal workflows when the body is valid (`run`, `start_run`, `run_partial`,
 * `start_batch_run`, schedules and webhook triggers, …; `{run_id}` does not count). The fuzzer never gives them the id of an
 * existing workflow, in the path or in the body, so no generated request can start a run; the test
 * checks afterwards that none was started.
 */
export function startsRuns(route: FuzzRoute): boolean {
  return route.method === 'POST' && /run|batch|schedule|trigger|hook/i.test(route.path.replace(/\{\w+\}/g, ''));
}

/**
 * Routes that run a body's `code` on a worker (`/code_convert/…`): any string there starts a
 * code-parse workflow, which no worker of this test takes. The fuzzer never names that field for
 * them, so the test's check that nothing was started holds for them too.
 */
export function runsBodyCode(route: FuzzRoute): boolean {
  return route.path.startsWith('/code_convert/') && route.bodyFields.includes('code');
}
