/**
 * How the audit trail names a request to an API route: an action `<resource>.<verb>` and the thing
 * acted on, read from the route's method and path, so that a route added later is named without
 * anyone having to think of it. A route whose derived name reads badly names its own
 * (`RouteDef.audit`); a handler that knows more (which decision, which trigger) leaves a note
 * (audit-note.ts).
 *
 * The target is the thing the path's last parameter names: its type from the collection it stands
 * in (`/wf/{workflow_id}/` → workflow) or the parameter's own name (`{eval_run_id}` → eval_run), its
 * id that parameter's value, with the parameters right before it (a price is `{provider}/{name}`).
 * A path without a parameter names what the action acts on (`POST /wf/` → workflow, its id the one
 * the answer gives a thing created).
 * The action's resource is that target, or the collection after it (`POST /wf/{workflow_id}/schedules/`
 * → schedule.create on the workflow); its verb is the path's last word when that is no collection
 * (`/schedules/{schedule_id}/pause/` → schedule.pause), else the method's (create, update, delete).
 */
export interface AuditNaming {
  action: string;
  /** The target's type, and the path parameters whose values, joined by `/`, are its id (none: no id from the path). */
  target: { type: string; params: string[] };
}

/** A route's own naming where the derived one reads badly. */
export interface AuditOverride {
  /** The action, e.g. `run.start`. */
  action?: string;
  /** The target's type. */
  target?: string;
  /** The path's parameter is a credential (a webhook's token): never recorded, the target's id is left to the handler. */
  secretPath?: true;
}

/** Path words that are not plain English plurals, or that another resource already names. */
const NOUNS: Record<string, string> = {
  wf: 'workflow',
  ds: 'dataset',
  of: 'output_file',
  indices: 'index',
  suites: 'eval_suite',
  'env-mgmt': 'credential',
  // PySpur's chat users and sessions: `user` and `session` are Spur's own (access users, sign-ins).
  user: 'chat_user',
  session: 'chat_session',
};

const METHOD_VERBS: Record<string, string> = { post: 'create', put: 'update', patch: 'update', delete: 'delete' };

const snake = (word: string) => word.replace(/-/g, '_');
const isCollection = (word: string) => word in NOUNS || word.endsWith('s');
const nounOf = (word: string) => NOUNS[word] ?? snake(word.endsWith('s') ? word.slice(0, -1) : word);
const paramOf = (segment: string) => /^\{(\w+)\}$/.exec(segment)?.[1] ?? null;

/** The target's type for the path parameter at `index`: its collection's noun, or its own name. */
function targetTypeOf(segments: string[], index: number): string {
  const param = paramOf(segments[index] as string) as string;
  const literal = segments
    .slice(0, index)
    .reverse()
    .find((s) => paramOf(s) === null);
  if (literal !== undefined && literal in NOUNS) return NOUNS[literal] as string;
  if (param.endsWith('_id')) return param.slice(0, -'_id'.length);
  if (param.endsWith('_name')) return param.slice(0, -'_name'.length);
  return literal === undefined ? param : nounOf(literal);
}

/** The audit naming of a route (`path` in OpenAPI's `{name}` form, under the API prefix). */
export function auditNamingOf(method: string, path: string, override: AuditOverride = {}): AuditNaming {
  const segments = path.split('/').filter((s) => s !== '');
  const verbOfMethod = METHOD_VERBS[method.toLowerCase()] ?? method.toLowerCase();
  const mainIndex = segments.findLastIndex((s) => paramOf(s) !== null);
  let derived: { action: string; target?: AuditNaming['target'] };
  if (mainIndex >= 0) {
    const type = targetTypeOf(segments, mainIndex);
    const last = segments.slice(mainIndex + 1).at(-1);
    const action =
      last === undefined
        ? `${type}.${verbOfMethod}`
        : isCollection(last)
          ? `${nounOf(last)}.${verbOfMethod}`
          : `${type}.${snake(last)}`;
    let first = mainIndex;
    while (first > 0 && paramOf(segments[first - 1] as string) !== null) first--;
    const params = segments.slice(first, mainIndex + 1).map((s) => paramOf(s) as string);
    derived = { action, target: { type, params } };
  } else {
    const last = segments.at(-1) ?? 'api';
    const before = segments.at(-2);
    const action =
      isCollection(last) || before === undefined
        ? `${nounOf(last)}.${verbOfMethod}`
        : `${nounOf(before)}.${snake(last)}`;
    derived = { action };
  }
  const action = override.action ?? derived.action;
  return {
    action,
    target: {
      type: override.target ?? derived.target?.type ?? resourceOf(action),
      params: override.secretPath ? [] : (derived.target?.params ?? []),
    },
  };
}

/** `workflow` of `workflow.update`. */
export const resourceOf = (action: string): string => action.split('.')[0] as string;

/** The action of a state-changing request that no route answers (an unknown path or method). */
export const NO_ROUTE_ACTION = 'api.no_route';
