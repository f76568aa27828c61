import { agentMaxIterations } from '../engine/agent-loop';
import { ENGINE_NODE_TYPES } from '../engine/node-kinds';
import type { DefinitionLimits } from '../config/settings';

export interface LimitIssue {
  /** Into the definition: `['nodes', i, 'config', field]`. */
  path: (string | number)[];
  message: string;
}

interface LimitedNode {
  id: string;
  node_type: string;
  parent_id: string | null;
  config: Record<string, unknown>;
}

/** Every node over a limit, naming the node, the field and the limit (empty when within them). */
export function definitionLimitIssues(def: { nodes: readonly LimitedNode[] }, limits: DefinitionLimits): LimitIssue[] {
  return [
    ...agentIssues(def.nodes, limits.agentMaxIterations),
    ...loopIssues(def.nodes, limits.loopMaxTotalIterations),
  ];
}

function agentIssues(nodes: readonly LimitedNode[], max: number): LimitIssue[] {
  return nodes.flatMap((node, i) => {
    if (node.node_type !== ENGINE_NODE_TYPES.agent) return [];
    const iterations = agentMaxIterations(node.config);
    if (iterations <= max) return [];
    // An agent without the field runs the default, which an installation may have set the cap under.
    const given = node.config.max_iterations === undefined ? ` (the default when unset)` : '';
    return [
      {
        path: ['nodes', i, 'config', 'max_iterations'],
        message: `AgentNode '${node.id}' has max_iterations ${iterations}${given}, over the maximum of ${max} (SPUR_AGENT_MAX_ITERATIONS)`,
      },
    ];
  });
}

/**
 * A loop inside a loop runs its body outer × inner times, so the bound is on the product along
 * each chain of nested loops. Each chain is reported once, at the loop where it crosses the bound.
 */
function loopIssues(nodes: readonly LimitedNode[], max: number): LimitIssue[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return nodes.flatMap((node, i) => {
    if (node.node_type !== ENGINE_NODE_TYPES.forLoop) return [];
    const chain = enclosingLoops(node, byId);
    const total = chain.reduce((product, loop) => product * loopIterations(loop), 1);
    const outer = total / loopIterations(node);
    if (total <= max || outer > max) return [];
    const nesting =
      chain.length > 1 ? ` in all (${chain.map((l) => `'${l.id}' ${loopIterations(l)}`).join(' × ')})` : '';
    return [
      {
        path: ['nodes', i, 'config', 'num_iterations'],
        message: `ForLoopNode '${node.id}' runs ${total} iterations${nesting}, over the maximum of ${max} loop iterations (SPUR_LOOP_MAX_TOTAL_ITERATIONS)`,
      },
    ];
  });
}

/** The loop and the loops around it, outermost first (a parent cycle, refused elsewhere, ends the walk). */
function enclosingLoops(node: LimitedNode, byId: ReadonlyMap<string, LimitedNode>): LimitedNode[] {
  const chain: LimitedNode[] = [];
  const seen = new Set<string>();
  for (
    let cur: LimitedNode | undefined = node;
    cur && !seen.has(cur.id);
    cur = cur.parent_id === null ? undefined : byId.get(cur.parent_id)
  ) {
    seen.add(cur.id);
    if (cur.node_type === ENGINE_NODE_TYPES.forLoop) chain.unshift(cur);
  }
  return chain;
}

/** As the engine reads it; a value it refuses to run (not a positive integer) counts as 1 here. */
function loopIterations(node: LimitedNode): number {
  const n = Number(node.config.num_iterations ?? 1);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}
