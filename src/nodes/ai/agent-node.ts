import { z } from 'zod';
import { dynamicOutputDefaults, extendConfig } from '../base-config.js';
import { openObject, subworkflowSchema } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { llmCallShape } from './llm-fields.js';

const config = extendConfig({
  ...dynamicOutputDefaults({
    output: { type: 'string' },
    tool_calls: { type: 'array', items: { type: 'string' } },
  }),
  ...llmCallShape(),
  subworkflow: subworkflowSchema.nullish(),
  max_iterations: z.number().int().min(1).default(10),
});

/** LLM tool-calling loop; its child nodes (`parent_id` = the agent) are the tools. */
export const agentNode: NodeTypeDefinition<typeof config> = {
  name: 'AgentNode',
  displayName: 'Agent',
  category: 'AI',
  visualTag: { acronym: 'AN', color: '#E83E8C' },
  config,
  input: openObject(),
  output: openObject(),
};
