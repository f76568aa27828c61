import type { z } from 'zod';
import { callbackUrlTargets } from '../nodes/callback-urls';
import { waitForCallbackConfig } from '../nodes/waits/wait-for-callback-node';
import { waitNodeConfig } from '../nodes/waits/wait-node';
import type { WorkflowDefinition } from './definition.schema';
import type { RuleIssue } from './definition-rules';

const WAIT_CONFIGS: Record<string, z.ZodType> = {
  WaitNode: waitNodeConfig,
  WaitForCallbackNode: waitForCallbackConfig,
};

/**
 * WaitNodes and WaitForCallbackNodes, checked at save (422 naming the field): their configs within
 * bounds, only at the top level (a run's workflow waits for them; a loop's iterations do not), and
 * every `callback_url("<id>")` in a template naming a WaitForCallbackNode of the workflow.
 */
export function checkWaits(def: WorkflowDefinition): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const callbackNodes = new Set(
    def.nodes.filter((n) => n.node_type === 'WaitForCallbackNode' && n.parent_id === null).map((n) => n.id),
  );
  def.nodes.forEach((node, i) => {
    const schema = WAIT_CONFIGS[node.node_type];
    if (schema) issues.push(...waitNodeIssues(node, i, schema));
    for (const { path, text } of strings(node.config ?? {}, []))
      for (const target of callbackUrlTargets(text))
        if (!callbackNodes.has(target))
          issues.push({
            path: ['nodes', i, 'config', ...path],
            message: `Node '${node.id}': callback_url("${target}") names no top-level WaitForCallbackNode of this workflow`,
            kind: 'value_error',
          });
  });
  return issues;
}

function waitNodeIssues(node: WorkflowDefinition['nodes'][number], i: number, schema: z.ZodType): RuleIssue[] {
  const at = (path: (string | number)[], message: string): RuleIssue => ({
    path: ['nodes', i, ...path],
    message: `${node.node_type} '${node.id}': ${message}`,
    kind: 'value_error',
  });
  if (node.parent_id !== null)
    return [at(['parent_id'], 'waits only at the top level of a workflow, not inside a ForLoopNode')];
  const parsed = schema.safeParse(node.config ?? {});
  if (!parsed.success)
    return parsed.error.issues.map((issue) =>
      at(['config', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], issue.message),
    );
  const config = parsed.data as { seconds?: number | null; until?: string };
  if (node.node_type === 'WaitNode' && !config.until?.trim() && (config.seconds ?? null) === null)
    return [at(['config', 'seconds'], 'needs seconds or until')];
  return [];
}

/** Every string in a config, with its path (templates may sit at any depth, e.g. a message list). */
function* strings(value: unknown, path: (string | number)[]): Generator<{ path: (string | number)[]; text: string }> {
  if (typeof value === 'string') yield { path, text: value };
  else if (Array.isArray(value)) for (const [k, v] of value.entries()) yield* strings(v, [...path, k]);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) yield* strings(v, [...path, k]);
}
