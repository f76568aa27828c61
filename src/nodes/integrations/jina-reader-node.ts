import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ title: z.string(), content: z.string() });

const config = fixedOutputConfig(output, {
  url_template: z.string().default('https://r.jina.ai/{url}'),
  use_readerlm_v2: z.boolean().default(true),
});

/** Reads a web page through Jina Reader. */
export const jinaReaderNode: NodeTypeDefinition<typeof config> = {
  name: 'JinaReaderNode',
  displayName: 'Reader',
  category: 'Integrations',
  visualTag: { acronym: 'JRN', color: '#DC3545' },
  config,
  input: openObject(),
  output,
  logo: '/images/jina.png',
  categoryLabel: 'Jina.AI',
  executionKind: 'io',
};
