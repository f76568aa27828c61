import { z } from 'zod';
import { integrationNode } from '../integrations/http/integration-node.js';
import { connect } from '../integrations/http/service-client.js';
import { SERVICES } from '../integrations/http/services.js';
import { renderTemplate } from '../templates.js';

const searchResult = z.object({
  title: z.string(),
  url: z.string(),
  content: z.string().nullish(),
  score: z.number().nullish(),
  published_date: z.string().nullish(),
  author: z.string().nullish(),
});

const answer = z.looseObject({
  results: z.array(
    z.looseObject({
      title: z.string().nullish(),
      url: z.string(),
      text: z.string().nullish(),
      score: z.number().nullish(),
      publishedDate: z.string().nullish(),
      author: z.string().nullish(),
    }),
  ),
});

/** Web search with Exa's POST /search, with each page's text when `include_content` is on. */
export const exaSearchNode = integrationNode({
  name: 'ExaSearchNode',
  displayName: 'ExaSearch',
  category: 'Search',
  tag: 'ESN #FF7F50',
  logo: '/images/exa.png',
  categoryLabel: 'Search',
  output: z.object({ results: z.array(searchResult) }),
  config: {
    query_template: z.string().default('{{input_1}}'),
    max_results: z.number().int().min(1).default(10),
    include_content: z.boolean().default(true),
    /** Per-result content length when `include_content` is on. */
    max_characters: z.number().int().min(1).default(1000),
  },
  async run(config, input, ctx) {
    const query = await renderTemplate(config.query_template, input, 'query_template');
    const api = await connect(ctx, SERVICES.exa);
    const contents = config.include_content ? { contents: { text: { maxCharacters: config.max_characters } } } : {};
    const found = await api.post(
      '/search',
      { query, numResults: Math.min(config.max_results, 100), ...contents },
      answer,
    );
    const results = found.results.map((r) => ({
      title: r.title ?? 'Untitled',
      url: r.url,
      content: r.text ?? null,
      score: r.score ?? null,
      published_date: r.publishedDate ?? null,
      author: r.author ?? null,
    }));
    return { results };
  },
});
