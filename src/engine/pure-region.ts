import type { GraphLevel } from './graph';
import type { NodeState } from './node-inputs';
import { ENGINE_NODE_TYPES, PURE_NODE_TYPES } from './node-kinds';
import type { GraphLink, GraphNode, TaskWrite } from './run-contract';

/**
 * A pure region: a pure node about to run and the pure nodes after it that can run right after it
 * with nothing else to wait for (every predecessor is in the region or has already ended). The
 * workflow runs a region as one local activity instead of one per node: a chain of five pure nodes
 * is one step of the run's history, one round trip through the SDK, and each node still gets its
 * own task record (inputs, outputs, start and end) exactly as if it had run alone.
 */
export interface PureRegion {
  /** The region's nodes, the start node first, in an order in which they can run. */
  nodes: GraphNode[];
  /** The ended nodes the region reads from: id, title and type only (what an input is built from). */
  predecessors: GraphNode[];
  /** The incoming links of the region's nodes. */
  links: GraphLink[];
  /** The ended predecessors' states. */
  preset: Array<[string, NodeState]>;
}

/** What a region's run says of each of its nodes, in the order they ended. */
export interface RegionOutcome {
  nodeId: string;
  state: NodeState;
  write: TaskWrite;
}

export interface PureRegionInput {
  runId: string;
  region: PureRegion;
}

export type PureRegionActivity = (input: PureRegionInput) => Promise<RegionOutcome[]>;

/** Activity type of a region's run. */
export const PURE_REGION_ACTIVITY = 'executePureRegion';

/** Pure nodes that run through the node executor: the engine's own kinds (input, pause, loop) never join. */
const REGION_NODE_TYPES: ReadonlySet<string> = new Set(
  [...PURE_NODE_TYPES].filter(
    (t) =>
      t !== ENGINE_NODE_TYPES.input && t !== ENGINE_NODE_TYPES.humanIntervention && t !== ENGINE_NODE_TYPES.forLoop,
  ),
);

export function joinsRegions(nodeType: string): boolean {
  return REGION_NODE_TYPES.has(nodeType);
}

/**
 * The region that starts at `startId` (a pure node whose input is ready), or null when no other
 * node could join it. Deterministic in the level and the states: the workflow computes it again
 * identically on replay. Nodes in `excluded` (a rerun's start node with its given input) never join.
 */
export function pureRegionFrom(
  level: GraphLevel,
  startId: string,
  states: ReadonlyMap<string, NodeState>,
  excluded: ReadonlySet<string> = new Set(),
): PureRegion | null {
  const start = level.byId.get(startId);
  if (!start || !joinsRegions(start.node_type)) return null;
  const members = grown(level, [start], states, excluded);
  return members.length === 1 ? null : regionOf(level, members, states);
}

/**
 * `seeds` and, breadth first, every pure node after them that can run once they have: one whose
 * every predecessor is among them or has ended (`states`, or `pending`: a node about to end).
 */
function grown(
  level: GraphLevel,
  seeds: GraphNode[],
  states: ReadonlyMap<string, NodeState>,
  excluded: ReadonlySet<string>,
  pending?: string,
): GraphNode[] {
  const members = [...seeds];
  const inRegion = new Set(seeds.map((n) => n.id));
  const ready = (id: string) =>
    (level.incoming.get(id) ?? []).every(
      (l) => inRegion.has(l.source_id) || states.has(l.source_id) || l.source_id === pending,
    );
  const joins = (id: string) => {
    const node = level.byId.get(id);
    if (!node || inRegion.has(id) || states.has(id) || excluded.has(id) || !joinsRegions(node.node_type)) return;
    if (!ready(id)) return;
    inRegion.add(id);
    members.push(node);
  };
  if (pending !== undefined) for (const next of level.outgoing.get(pending) ?? []) joins(next);
  for (let i = 0; i < members.length; i++)
    for (const next of level.outgoing.get((members[i] as GraphNode).id) ?? []) joins(next);
  return members;
}

/** The region of `members`: their links, and the predecessors outside it with their states (but `pending`'s). */
function regionOf(
  level: GraphLevel,
  members: GraphNode[],
  states: ReadonlyMap<string, NodeState>,
  pending?: string,
): PureRegion {
  const inRegion = new Set(members.map((n) => n.id));
  const links = members.flatMap((n) => level.incoming.get(n.id) ?? []);
  const predecessorIds = [...new Set(links.map((l) => l.source_id).filter((id) => !inRegion.has(id)))];
  return {
    nodes: members,
    predecessors: predecessorIds.map((id) => {
      const { title, node_type, parent_id } = level.byId.get(id) as GraphNode;
      return { id, title, node_type, parent_id, config: {} };
    }),
    links,
    preset: predecessorIds.filter((id) => id !== pending).map((id) => [id, states.get(id) as NodeState]),
  };
}

/**
 * The pure nodes that would run right after `callId` ends, computed before it starts, so the call
 * can run them itself once it has answered (a short call's follow-up: one step of the history, not
 * two): its pure successors whose other inputs have all ended, and the pure nodes after them that
 * could then run, as in a region (one node is enough). `callId` is among the predecessors but not in
 * `preset`: whatever runs the region adds its state, known only once the call has answered.
 */
export function followUpRegion(
  level: GraphLevel,
  callId: string,
  states: ReadonlyMap<string, NodeState>,
  excluded: ReadonlySet<string> = new Set(),
): PureRegion | null {
  const members = grown(level, [], states, excluded, callId);
  return members.length === 0 ? null : regionOf(level, members, states, callId);
}

/**
 * The region as a level of its own, for the engine's walker: its nodes with their links, and the
 * ended predecessors as preset nodes with nothing coming in.
 */
export function regionLevel(region: PureRegion): { level: GraphLevel; preset: Map<string, NodeState> } {
  const nodes = [...region.predecessors, ...region.nodes];
  const incoming = new Map<string, GraphLink[]>(nodes.map((n) => [n.id, []]));
  const outgoing = new Map<string, string[]>(nodes.map((n) => [n.id, []]));
  for (const link of region.links) {
    incoming.get(link.target_id)?.push(link);
    outgoing.get(link.source_id)?.push(link.target_id);
  }
  return {
    level: { nodes, byId: new Map(nodes.map((n) => [n.id, n])), incoming, outgoing, children: new Map() },
    preset: new Map(region.preset),
  };
}
