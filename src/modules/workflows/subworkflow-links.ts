import type { Models, WorkflowDoc } from '../../db/models';
import type { WorkflowVersions } from '../../db/workflow-versions';
import { fromJsonText } from '../../db/json-text';
import { ENGINE_NODE_TYPES } from '../../engine/node-kinds';
import { RequestValidationError, type ValidationDetail } from '../../errors';
import type { WorkflowDefinition, WorkflowNode } from '../../definitions/definition.schema';

export interface SubworkflowLinkDeps {
  models: Models;
  versions: Pick<WorkflowVersions, 'ensureVersion'>;
  maxDepth: number;
}

/** A workflow as a chain names it: `'Name' (S1)`. */
const named = (id: string, name: string) => `'${name}' (${id})`;

/** The top-level SubworkflowNodes of a definition (one inside a loop is refused by the rules), with their index. */
function subworkflowNodes(def: WorkflowDefinition): Array<{ node: WorkflowNode; index: number }> {
  return def.nodes
    .map((node, index) => ({ node, index }))
    .filter(
      ({ node }) =>
        node.node_type === ENGINE_NODE_TYPES.subworkflow && node.parent_id === null && targetOf(node) !== '',
    );
}

/** The workflow a node names; empty while the node is not filled in yet (nothing to check). */
const targetOf = (node: WorkflowNode) => String(node.config.workflow_id ?? '');

/**
 * The save-time checks of a definition's SubworkflowNodes, against the workspace's workflows as
 * they are now: each names a workflow of the caller's workspace (another's is not found, as an id
 * that never existed), no chain through them comes back to the workflow being saved, and none
 * nests deeper than `maxDepth`. Each problem is a 422 at the node's `workflow_id`, naming the chain.
 * A `pinned` node gets the child's current version recorded in `pinned_version_id`.
 */
export function createSubworkflowLinks(deps: SubworkflowLinkDeps) {
  const { Workflow } = deps.models;

  async function checked(
    self: { id: string | null; name: string },
    def: WorkflowDefinition,
  ): Promise<WorkflowDefinition> {
    const nodes = subworkflowNodes(def);
    if (nodes.length === 0) return def;
    const docs = new Map<string, WorkflowDoc | null>();
    const load = async (id: string) => {
      if (!docs.has(id)) docs.set(id, await Workflow.findById(id).lean<WorkflowDoc>());
      return docs.get(id) ?? null;
    };
    const start = named(self.id ?? 'new', self.name);
    const problems: ValidationDetail[] = [];
    const pinned = new Map<number, string | null>();

    /** How deep the chains below a workflow already walked go (0: it runs no child); none comes back. */
    const heights = new Map<string, number>();
    const tooDeep = (chain: string[], depth: number) =>
      `nesting ${depth} deep: ${chain.join(' → ')}, over the limit of ${deps.maxDepth} (SPUR_SUBWORKFLOW_MAX_DEPTH)`;

    /** The first problem of the chains below `id`, reached through `path` (names, the saved workflow's first). */
    async function walk(id: string, path: string[], onPath: string[]): Promise<string | null> {
      if (id === self.id) return `a cycle: ${[...path, start].join(' → ')}`;
      const doc = await load(id);
      if (!doc) return `workflow ${id} was not found`;
      const here = [...path, named(id, doc.name)];
      if (onPath.includes(id)) return `a cycle: ${here.join(' → ')}`;
      const depth = here.length - 1;
      // Walked before through another path: only how deep it goes matters now (no chain is walked twice).
      const height = heights.get(id);
      if (height !== undefined) return depth + height > deps.maxDepth ? tooDeep([...here, '…'], depth + height) : null;
      if (depth > deps.maxDepth) return tooDeep(here, depth);
      let below = 0;
      const definition = fromJsonText<WorkflowDefinition>(doc.definition);
      for (const { node } of definition ? subworkflowNodes(definition) : []) {
        const target = targetOf(node);
        const problem = await walk(target, here, [...onPath, id]);
        if (problem) return problem;
        below = Math.max(below, 1 + (heights.get(target) ?? 0));
      }
      heights.set(id, below);
      return null;
    }

    for (const { node, index } of nodes) {
      const target = targetOf(node);
      const problem = await walk(target, [start], []);
      if (problem) {
        problems.push({
          type: 'value_error',
          loc: ['body', 'definition', 'nodes', index, 'config', 'workflow_id'],
          msg: `Value error, SubworkflowNode '${node.id}': ${problem}`,
          input: target,
        });
        continue;
      }
      const doc = (await load(target)) as WorkflowDoc;
      pinned.set(index, node.config.version === 'pinned' ? (await deps.versions.ensureVersion(doc))._id : null);
    }
    if (problems.length > 0) throw new RequestValidationError(problems);
    return {
      ...def,
      nodes: def.nodes.map((node, index) =>
        pinned.has(index) ? { ...node, config: { ...node.config, pinned_version_id: pinned.get(index) } } : node,
      ),
    };
  }

  return { checked };
}

export type SubworkflowLinks = ReturnType<typeof createSubworkflowLinks>;
