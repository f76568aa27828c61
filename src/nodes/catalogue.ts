import type { z } from 'zod';
import { toPlainJsonSchema } from './base-config.js';
import { NODE_TYPES } from './registry.js';
import { NODE_CATEGORIES, type ModelConstraint, type NodeTypeDefinition } from './types.js';

export type JsonSchema = Record<string, unknown>;

/** One entry of `GET /node/supported_types/`; keys are declared in their serialised order. */
export interface NodeTypeEntry {
  name: string;
  input: JsonSchema;
  output: JsonSchema;
  config: JsonSchema;
  visual_tag: { acronym: string; color: string };
  has_fixed_output: boolean;
  model_constraints?: Record<string, ModelConstraint>;
  logo?: string;
  category?: string;
}

function modelSchema(model: z.ZodType | null): JsonSchema {
  return model ? toPlainJsonSchema(model) : {};
}

function configSchema(node: NodeTypeDefinition): JsonSchema {
  const { title: _ignored, ...schema } = toPlainJsonSchema(node.config);
  return { title: node.displayName, ...schema };
}

function fixedOutputDefault(config: JsonSchema): boolean {
  const properties = config.properties as Record<string, { default?: unknown }> | undefined;
  return properties?.has_fixed_output?.default === true;
}

function toEntry(node: NodeTypeDefinition): NodeTypeEntry {
  const config = configSchema(node);
  const entry: NodeTypeEntry = {
    name: node.name,
    input: modelSchema(node.input),
    output: modelSchema(node.output),
    config,
    visual_tag: { ...node.visualTag },
    has_fixed_output: fixedOutputDefault(config),
  };
  if (node.modelConstraints) entry.model_constraints = node.modelConstraints;
  if (node.logo) entry.logo = node.logo;
  if (node.categoryLabel) entry.category = node.categoryLabel;
  return entry;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

let cached: Readonly<Record<string, NodeTypeEntry[]>> | undefined;

/**
 * The `/node/supported_types/` body: category → entries. Built once; the result is frozen
 * because every caller shares it.
 */
export function buildSupportedNodeTypes(): Readonly<Record<string, NodeTypeEntry[]>> {
  if (!cached) {
    const body: Record<string, NodeTypeEntry[]> = {};
    for (const category of NODE_CATEGORIES) {
      body[category] = NODE_TYPES.filter((node) => node.category === category).map(toEntry);
    }
    cached = deepFreeze(body);
  }
  return cached;
}
