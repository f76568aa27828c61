import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ crawl_result: z.string() });

const config = fixedOutputConfig(output, {
  url_template: z.string().default(''),
  /** Most pages to crawl */
  limit: z.number().int().min(1).nullish(),
});

/** Crawls a site from a start URL (output: JSON text). */
export const firecrawlCrawlNode: NodeTypeDefinition<typeof config> = {
  name: 'FirecrawlCrawlNode',
  displayName: 'Firecrawl Crawl',
  category: 'Integrations',
  visualTag: { acronym: 'FCN', color: '#FF00FF' },
  config,
  input: openObject(),
  output,
  logo: '/images/firecrawl.png',
  categoryLabel: 'Firecrawl',
  executionKind: 'io',
};
