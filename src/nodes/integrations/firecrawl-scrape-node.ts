import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ markdown: z.string() });

const config = fixedOutputConfig(output, {
  url_template: z.string().default(''),
});

/** Scrapes one page to Markdown. */
export const firecrawlScrapeNode: NodeTypeDefinition<typeof config> = {
  name: 'FirecrawlScrapeNode',
  displayName: 'Firecrawl Scrape',
  category: 'Integrations',
  visualTag: { acronym: 'FSN', color: '#E83E8C' },
  config,
  input: openObject(),
  output,
  logo: '/images/firecrawl.png',
  categoryLabel: 'Firecrawl',
  executionKind: 'io',
};
