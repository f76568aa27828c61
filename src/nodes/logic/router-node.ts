import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeOutput, NodeTypeDefinition } from '../types.js';
import { routeMatches } from './route-conditions.js';

export const COMPARISON_OPERATORS = [
  'contains',
  'equals',
  'greater_than',
  'less_than',
  'starts_with',
  'not_starts_with',
  'is_empty',
  'is_not_empty',
  'number_equals',
] as const;

export const routeConditionSchema = z.looseObject({
  /** Dotted path into the router's input, e.g. `input_node.x`. */
  variable: z.string(),
  operator: z.enum(COMPARISON_OPERATORS).default('contains'),
  value: z.unknown(),
  /** How this condition joins the ones before it; ignored on the first. */
  logicalOperator: z.enum(['AND', 'OR']).nullable().default('AND'),
});

export const routeConditionGroupSchema = z.looseObject({ conditions: z.array(routeConditionSchema) });

export type RouteConditionGroup = z.output<typeof routeConditionGroupSchema>;

function defaultRouteMap(): Record<string, RouteConditionGroup> {
  return { route1: { conditions: [{ variable: '', operator: 'contains', value: '', logicalOperator: 'AND' }] } };
}

const config = extendConfig({
  route_map: z.record(z.string(), routeConditionGroupSchema).default(defaultRouteMap),
});

/** Emits the whole input on every route whose conditions hold, null on the others. */
export const routerNode: NodeTypeDefinition<typeof config> = {
  name: 'RouterNode',
  displayName: 'Router',
  category: 'Logic',
  visualTag: { acronym: 'RN', color: '#FF7F50' },
  config,
  input: openObject(),
  output: null,
  async execute(config, input) {
    const output: NodeOutput = {};
    for (const [route, group] of Object.entries(config.route_map)) {
      // Each matching route gets its own copy, so downstream changes never leak between routes.
      output[route] = routeMatches(group.conditions, input) ? structuredClone(input) : null;
    }
    return output;
  },
};
