import { z } from 'zod';
import { integrationNode, renderOrFirstString } from './http/integration-node.js';
import { connect } from './http/service-client.js';
import { SERVICES } from './http/services.js';

const JINA_DEFAULT = 'https://r.jina.ai/';
const answer = z.looseObject({ data: z.looseObject({ title: z.string().nullish(), content: z.string().nullish() }) });

/**
 * Reads a page with Jina Reader: GET `{JINA_API_BASE}/{page URL}` asking for JSON. The rendered
 * `url_template` may be the page URL itself or, as PySpur's default, a full `https://r.jina.ai/…` URL.
 */
export const jinaReaderNode = integrationNode({
  name: 'JinaReaderNode',
  displayName: 'Reader',
  category: 'Integrations',
  tag: 'JRN #DC3545',
  logo: '/images/jina.png',
  categoryLabel: 'Jina.AI',
  output: z.object({ title: z.string(), content: z.string() }),
  config: { url_template: z.string().default('https://r.jina.ai/{url}'), use_readerlm_v2: z.boolean().default(true) },
  async run(config, input, ctx) {
    const rendered = (await renderOrFirstString(config.url_template, input, 'url_template')).trim();
    let page = rendered.startsWith(JINA_DEFAULT) ? rendered.slice(JINA_DEFAULT.length) : rendered;
    // The default template's `{url}` is no Jinja variable: read it as "the URL in the input".
    if (page === '{url}') page = await renderOrFirstString('', input, 'url_template');
    const api = await connect(ctx, SERVICES.jina);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...(config.use_readerlm_v2 ? { 'x-respond-with': 'readerlm-v2' } : {}),
    };
    const res = await api.request({ path: `/${page}`, headers });
    const parsed = answer.safeParse(res.json);
    if (!parsed.success) return { title: '', content: res.text };
    const content = parsed.data.data.content ?? '';
    // ReaderLM answers inside a ```markdown fence.
    const fenced = /^```markdown\n?([\s\S]*?)\n?```\s*$/.exec(content);
    return { title: parsed.data.data.title ?? '', content: fenced ? (fenced[1] ?? '') : content };
  },
});
