import type { GraphLink, GraphNode, RunDefinition } from './run-contract';

/** A definition split into what the scheduler walks: one level of nodes and their links. */
export interface GraphLevel {
  nodes: GraphNode[];
  byId: Map<string, GraphNode>;
  /** Incoming links per node, in definition (link) order. */
  incoming: Map<string, GraphLink[]>;
  /** Direct successors per node. */
  outgoing: Map<string, string[]>;
  /** Children of container nodes (ForLoopNode), keyed by the container's id. */
  children: Map<string, GraphLevel>;
}

export class GraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GraphError';
  }
}

/**
 * PySpur's shape for execution: nodes with a `parent_id` move into their parent's sub-graph
 * with the links among them; links that cross levels are dropped. Throws GraphError for a
 * definition that cannot run (a cycle, a link to a missing node).
 */
export function planGraph(def: RunDefinition): GraphLevel {
  const ids = new Set(def.nodes.map((n) => n.id));
  for (const link of def.links) {
    for (const end of [link.source_id, link.target_id]) {
      if (!ids.has(end))
        throw new GraphError(
          `Link ${link.source_id} → ${link.target_id} refers to a node that does not exist: '${end}'`,
        );
    }
  }
  return buildLevel(def, null);
}

function buildLevel(def: RunDefinition, parentId: string | null): GraphLevel {
  const nodes = def.nodes.filter((n) => (n.parent_id ?? null) === parentId);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const incoming = new Map<string, GraphLink[]>(nodes.map((n) => [n.id, []]));
  const outgoing = new Map<string, string[]>(nodes.map((n) => [n.id, []]));
  for (const link of def.links) {
    if (!byId.has(link.source_id) || !byId.has(link.target_id)) continue;
    incoming.get(link.target_id)?.push(link);
    outgoing.get(link.source_id)?.push(link.target_id);
  }
  const children = new Map<string, GraphLevel>();
  for (const node of nodes) {
    if (def.nodes.some((n) => n.parent_id === node.id)) children.set(node.id, buildLevel(def, node.id));
  }
  const level = { nodes, byId, incoming, outgoing, children };
  assertAcyclic(level);
  return level;
}

/** Kahn's algorithm; the nodes left over sit on a cycle, which would wait forever. */
export function topologicalOrder(level: GraphLevel): string[] {
  const remaining = new Map(level.nodes.map((n) => [n.id, level.incoming.get(n.id)?.length ?? 0]));
  const ready = level.nodes.filter((n) => remaining.get(n.id) === 0).map((n) => n.id);
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift() as string;
    order.push(id);
    for (const next of level.outgoing.get(id) ?? []) {
      const left = (remaining.get(next) ?? 0) - 1;
      remaining.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  return order;
}

function assertAcyclic(level: GraphLevel): void {
  const order = topologicalOrder(level);
  if (order.length === level.nodes.length) return;
  const done = new Set(order);
  const stuck = level.nodes.filter((n) => !done.has(n.id)).map((n) => n.id);
  throw new GraphError(`The workflow has a cycle through nodes: ${stuck.join(', ')}`);
}

/**
 * The sub-graph a partial run needs: the target and what it transitively depends on, stopping at
 * nodes whose output is already known (their own predecessors need not run).
 */
export function restrictToAncestors(
  level: GraphLevel,
  target: string,
  known: ReadonlySet<string> = new Set(),
): GraphLevel {
  const keep = new Set<string>([target]);
  const stack = known.has(target) ? [] : [target];
  while (stack.length > 0) {
    for (const link of level.incoming.get(stack.pop() as string) ?? []) {
      if (keep.has(link.source_id)) continue;
      keep.add(link.source_id);
      if (!known.has(link.source_id)) stack.push(link.source_id);
    }
  }
  const nodes = level.nodes.filter((n) => keep.has(n.id));
  return {
    nodes,
    byId: new Map(nodes.map((n) => [n.id, n])),
    // A known node keeps no incoming links: it is not run, so what feeds it does not matter.
    incoming: new Map(
      nodes.map((n) => [
        n.id,
        (level.incoming.get(n.id) ?? []).filter((link) => keep.has(link.source_id) && !known.has(n.id)),
      ]),
    ),
    outgoing: new Map(nodes.map((n) => [n.id, (level.outgoing.get(n.id) ?? []).filter((id) => keep.has(id))])),
    children: level.children,
  };
}

/**
 * The nodes of `level` that never run beside another of its nodes: every other node of the level
 * comes before or after them on some path, so none can be running while one of them runs.
 */
export function nodesRunningAlone(level: GraphLevel): Set<string> {
  const reached = (from: string, next: (id: string) => readonly string[]): Set<string> => {
    const seen = new Set<string>();
    const stack = [from];
    for (let id = stack.pop(); id !== undefined; id = stack.pop())
      for (const n of next(id))
        if (!seen.has(n)) {
          seen.add(n);
          stack.push(n);
        }
    return seen;
  };
  const before = (id: string) => (level.incoming.get(id) ?? []).map((link) => link.source_id);
  const after = (id: string) => level.outgoing.get(id) ?? [];
  const alone = new Set<string>();
  for (const node of level.nodes) {
    const related = reached(node.id, before).size + reached(node.id, after).size;
    if (related === level.nodes.length - 1) alone.add(node.id);
  }
  return alone;
}
