// The workflow both Spur and PySpur run in the side-by-side bench (the targets' "5-node pure
// workflow": input → static → merge → router → output). The same PySpur-shaped definition is
// posted to both services unchanged, and every blocking answer must carry the input text at the
// OutputNode.
import type { BenchNode } from './scenarios';

interface VsLink {
  source_id: string;
  target_id: string;
  source_handle: string | null;
  target_handle: null;
}

const node = (
  id: string,
  nodeType: string,
  config: Record<string, unknown>,
): BenchNode & { coordinates: { x: number; y: number } } => ({
  id,
  title: id,
  node_type: nodeType,
  config,
  parent_id: null,
  coordinates: { x: 0, y: 0 },
});
const link = (source: string, target: string, handle: string | null = null): VsLink => ({
  source_id: source,
  target_id: target,
  source_handle: handle,
  target_handle: null,
});

export const VS_WORKFLOW = {
  name: 'bench: input → static → merge → router → output',
  definition: {
    nodes: [
      node('in', 'InputNode', { output_schema: { text: 'string' } }),
      node('static', 'StaticValueNode', { values: { greeting: 'hello' } }),
      node('merge', 'MergeNode', {}),
      node('router', 'RouterNode', {
        route_map: {
          route1: {
            conditions: [
              { variable: 'merge.static.greeting', operator: 'equals', value: 'hello', logicalOperator: 'AND' },
            ],
          },
        },
      }),
      node('out', 'OutputNode', { output_schema: { text: 'string' }, output_map: { text: 'router.merge.in.text' } }),
    ],
    links: [
      link('in', 'static'),
      link('in', 'merge'),
      link('static', 'merge'),
      link('merge', 'router'),
      link('router', 'out', 'route1'),
    ],
  },
};

/** The InputNode's id (its task is settled by the workflow itself, no node execution). */
export const VS_INPUT_NODE_ID = 'in';

export const vsRunBody = (text: string) => ({ initial_inputs: { in: { text } } });

/**
 * True when the OutputNode's answer holds the input text. PySpur nests it one level deeper
 * (`{"text": {"text": …}}`, its output_map quirk), so the check looks inside.
 */
export function vsAnswerOk(body: unknown, text: string): boolean {
  const out = body && typeof body === 'object' ? (body as Record<string, unknown>).out : undefined;
  const found = (v: unknown): boolean => v === text || (!!v && typeof v === 'object' && Object.values(v).some(found));
  return found(out);
}
