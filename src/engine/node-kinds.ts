/**
 * Node types that are cheap and side-effect free: the workflow runs them as local activities (no
 * server round trip). Everything else (LLM, HTTP, user code) runs as a regular activity with
 * retries and heartbeats. The one declaration of purity: workflows read it, and cannot load the
 * node registry.
 */
export const PURE_NODE_TYPES: ReadonlySet<string> = new Set([
  'InputNode',
  'OutputNode',
  'StaticValueNode',
  'RouterNode',
  'CoalesceNode',
  'MergeNode',
  'HumanInterventionNode',
  'ForLoopNode',
]);

/** Node types the scheduler handles itself rather than through `execute`. */
export const ENGINE_NODE_TYPES = {
  input: 'InputNode',
  forLoop: 'ForLoopNode',
  coalesce: 'CoalesceNode',
  router: 'RouterNode',
  output: 'OutputNode',
  humanIntervention: 'HumanInterventionNode',
  agent: 'AgentNode',
  bestOfN: 'BestOfNNode',
  subworkflow: 'SubworkflowNode',
  wait: 'WaitNode',
  waitForCallback: 'WaitForCallbackNode',
} as const;

/** Nodes that wait durably in their run's workflow (a timer, a callback), holding no worker slot. */
export const WAITING_NODE_TYPES: ReadonlySet<string> = new Set([
  ENGINE_NODE_TYPES.wait,
  ENGINE_NODE_TYPES.waitForCallback,
]);

/**
 * Whether a run of this graph needs a workflow of its own (a batch's rows then run as child
 * workflows, not inline): a pause for a human, a timer or a callback is waited for by a workflow.
 */
export function needsOwnWorkflow(nodes: readonly { node_type: string }[]): boolean {
  return canPause(nodes) || nodes.some((n) => WAITING_NODE_TYPES.has(n.node_type));
}

/**
 * Whether a run of this graph can ever show PAUSED: only a HumanInterventionNode opens a pause
 * (at the top level, inside a loop, or as an agent's tool; every one is in `nodes`).
 */
export function canPause(nodes: readonly { node_type: string }[]): boolean {
  return nodes.some((n) => n.node_type === ENGINE_NODE_TYPES.humanIntervention);
}
