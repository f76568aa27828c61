import { BadRequestError } from '../errors';
import { GraphError, planGraph } from '../engine/graph';
import type { GraphNode, RunDefinition } from '../engine/run-contract';
import type { WorkflowDefinition } from '../definitions/definition.schema';
import { definitionLimitIssues } from '../definitions/definition-limits';
import type { DefinitionLimits } from '../config/settings';
import { fromJsonText } from '../db/json-text';

/** The engine's view of a stored definition (the fields it reads). */
export function toRunDefinition(def: WorkflowDefinition): RunDefinition {
  return {
    nodes: def.nodes.map((n) => ({
      id: n.id,
      title: n.title,
      parent_id: n.parent_id,
      node_type: n.node_type,
      config: n.config,
    })),
    links: def.links.map((l) => ({
      source_id: l.source_id,
      target_id: l.target_id,
      source_handle: l.source_handle,
      target_handle: l.target_handle,
    })),
  };
}

/** A stored workflow's or version's definition (its JSON text) as a run executes it. */
export function storedRunDefinition(definitionText: string): RunDefinition {
  return toRunDefinition(fromJsonText<WorkflowDefinition>(definitionText) as WorkflowDefinition);
}

/** The graph can be scheduled and has its InputNode, which is returned; else a 400 saying why. */
export function checkRunnable(def: RunDefinition): GraphNode {
  try {
    planGraph(def);
  } catch (err) {
    if (err instanceof GraphError) throw new BadRequestError(err.message, 'INVALID_GRAPH');
    throw err;
  }
  const inputNode = def.nodes.find((n) => n.node_type === 'InputNode' && n.parent_id === null);
  if (!inputNode) throw new BadRequestError('The workflow has no InputNode, so it cannot be run', 'NO_INPUT_NODE');
  return inputNode;
}

/**
 * A definition saved before the limits were lowered (or before they existed) is refused when run:
 * the agent and loop caps hold for every run, not only for definitions saved since.
 */
export function checkWithinLimits(def: RunDefinition, limits: DefinitionLimits): void {
  const issues = definitionLimitIssues(def, limits);
  if (issues.length > 0)
    throw new BadRequestError(
      `${issues.map((i) => i.message).join('; ')}: lower it and save the workflow`,
      'OVER_LIMIT',
    );
}

/** A stored definition ready to run: parsed, schedulable, with its InputNode, within the limits (400 otherwise). */
export function runnableDefinition(
  definitionText: string,
  limits: DefinitionLimits,
): { definition: RunDefinition; inputNode: GraphNode } {
  const definition = storedRunDefinition(definitionText);
  const inputNode = checkRunnable(definition);
  checkWithinLimits(definition, limits);
  return { definition, inputNode };
}

/**
 * Checks, before any run record exists, that the definition can run with these inputs, and picks
 * the InputNode's input: `initial_inputs` is keyed by the InputNode's id (PySpur), with its title
 * accepted too (PySpur's deploy snippet). Every problem is a 400 naming what to fix.
 */
export function resolveRunInputs(
  def: RunDefinition,
  initialInputs: Record<string, Record<string, unknown>> | null,
): Record<string, unknown> {
  const inputNode = checkRunnable(def);
  const given = initialInputs ?? {};
  for (const key of Object.keys(given)) {
    if (key !== inputNode.id && key !== inputNode.title) {
      throw new BadRequestError(
        `initial_inputs has an entry for '${key}', which is not the InputNode (id '${inputNode.id}', title '${inputNode.title}')`,
        'UNKNOWN_INPUT_NODE',
      );
    }
  }
  const input = given[inputNode.id] ?? given[inputNode.title];
  if (!input || Object.keys(input).length === 0) {
    throw new BadRequestError(`initial_inputs needs the InputNode's fields under '${inputNode.id}'`, 'MISSING_INPUTS');
  }
  return input;
}
