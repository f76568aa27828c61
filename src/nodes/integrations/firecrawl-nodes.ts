import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import { pyJson } from '../json-text.js';
import type { NodeExecutionContext } from '../types.js';
import { integrationNode, renderOrFirstString } from './http/integration-node.js';
import { serviceFailure } from './http/service-errors.js';
import { connect, type ServiceClient } from './http/service-client.js';
import { SERVICES } from './http/services.js';
import { pause } from './http/settings.js';

/** Firecrawl v1: scrape one page, or start a crawl and poll it until it ends. */
const common = { category: 'Integrations', logo: '/images/firecrawl.png', categoryLabel: 'Firecrawl' } as const;

const FIRST_POLL_MS = 1000;
const MAX_POLL_MS = 15_000;
const MAX_RESULT_PAGES = 1000;

const started = z.looseObject({ id: z.string().min(1) });
const crawlStatus = z.looseObject({
  status: z.string(),
  data: z.array(z.unknown()).optional(),
  next: z.string().nullish(),
  error: z.string().nullish(),
  completed: z.number().optional(),
  total: z.number().optional(),
});

/** What a crawl's heartbeats record, so a retried attempt polls the crawl it started. */
const crawlProgress = z.looseObject({ crawlId: z.string().min(1) });

export const firecrawlCrawlNode = integrationNode({
  ...common,
  name: 'FirecrawlCrawlNode',
  displayName: 'Firecrawl Crawl',
  tag: 'FCN #FF00FF',
  output: z.object({ crawl_result: z.string() }),
  config: {
    url_template: z.string().default(''),
    /** Most pages to crawl */
    limit: z.number().int().min(1).nullish(),
  },
  async run(config, input, ctx) {
    const url = await renderOrFirstString(config.url_template, input, 'url_template');
    const api = await connect(ctx, SERVICES.firecrawl);
    const resumed = crawlProgress.safeParse(ctx.heartbeatDetails);
    let crawlId: string;
    if (resumed.success) {
      crawlId = resumed.data.crawlId;
    } else {
      const body = {
        url,
        ...(config.limit ? { limit: config.limit } : {}),
        scrapeOptions: { formats: ['markdown', 'html'] },
      };
      crawlId = (await api.post('/v1/crawl', body, started)).id;
    }
    // Recorded before the first poll: a worker that dies from here on leaves the id to its successor.
    ctx.heartbeat({ crawlId });
    return { crawl_result: pyJson(await pollCrawl(api, crawlId, ctx)) };
  },
});

async function pollCrawl(api: ServiceClient, crawlId: string, ctx: NodeExecutionContext): Promise<unknown[]> {
  const path = `/v1/crawl/${encodeURIComponent(crawlId)}`;
  for (let wait = FIRST_POLL_MS; ; wait = Math.min(wait * 2, MAX_POLL_MS)) {
    const status = await api.get(path, crawlStatus);
    if (status.status === 'completed') return collectPages(api, path, status);
    if (status.status === 'failed' || status.status === 'cancelled')
      throw serviceFailure(
        SERVICES.firecrawl,
        `crawl ${crawlId} ${status.status}${status.error ? `: ${status.error}` : ''}`,
      );
    ctx.heartbeat({ crawlId, status: status.status, completed: status.completed, total: status.total });
    await pause(wait, ctx.signal);
  }
}

/** A finished crawl's pages; big results come in parts linked by `next` (followed on the configured base). */
async function collectPages(api: ServiceClient, path: string, first: z.output<typeof crawlStatus>): Promise<unknown[]> {
  const pages = [...(first.data ?? [])];
  let next = first.next;
  for (let part = 0; next && part < MAX_RESULT_PAGES; part++) {
    const skip = new URL(next, api.baseUrl).searchParams.get('skip');
    if (skip === null) throw new NodeExecutionError(`Firecrawl's next link has no 'skip': ${next}`);
    const more = await api.get(path, crawlStatus, { skip });
    pages.push(...(more.data ?? []));
    next = more.next;
  }
  return pages;
}

const scraped = z.looseObject({ data: z.looseObject({ markdown: z.string().nullish() }) });

export const firecrawlScrapeNode = integrationNode({
  ...common,
  name: 'FirecrawlScrapeNode',
  displayName: 'Firecrawl Scrape',
  tag: 'FSN #E83E8C',
  output: z.object({ markdown: z.string() }),
  config: { url_template: z.string().default('') },
  async run(config, input, ctx) {
    const url = await renderOrFirstString(config.url_template, input, 'url_template');
    const api = await connect(ctx, SERVICES.firecrawl);
    const page = await api.post('/v1/scrape', { url, formats: ['markdown'] }, scraped);
    return { markdown: page.data.markdown ?? '' };
  },
});
