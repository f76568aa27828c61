import { NodeExecutionError } from '../../errors.js';
import { renderTemplate } from '../../templates.js';
import type { NodeInput } from '../../types.js';

/** `scheme://` and at least the start of a host, written before the template's first tag. */
const WRITTEN_HOST = /^\s*(https?:\/\/[^/?#\s]+)/i;

/**
 * The origin a url template fixes, or null when its host is left to the input. Input fills a path
 * or a query but must not move the request to another host: with `https://api.example.com/{{ id }}`
 * (or `https://api.example.com{{ path }}`), `id` = `@evil.example/` or `.evil.example` is refused.
 * A template whose authority starts with a tag (`https://{{ host }}/…`, `{{ url }}`) lets input
 * choose the host, within the outbound policy; a credential still goes only under its base.
 */
function pinnedOrigin(template: string): string | null {
  const tag = template.search(/\{[{%#]/);
  const match = WRITTEN_HOST.exec(tag < 0 ? template : template.slice(0, tag));
  if (!match?.[1]) return null;
  try {
    return new URL(match[1]).origin;
  } catch {
    return match[1]; // not a host as written: no rendered URL has this origin, so the request is refused
  }
}

/** The request URL: `url` rendered, checked against its written origin, `query` rendered and encoded onto it. */
export async function requestUrl(template: string, query: Record<string, string>, input: NodeInput): Promise<URL> {
  if (!template.trim()) throw new NodeExecutionError('url is required');
  const rendered = (await renderTemplate(template, input, 'url')).trim();
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    throw new NodeExecutionError(`url is not a URL once rendered: '${rendered.slice(0, 200)}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new NodeExecutionError(`url must be http or https, not ${url.protocol}`);
  if (url.username || url.password)
    throw new NodeExecutionError('url may not hold a user name or password: name a stored credential in headers');
  const pinned = pinnedOrigin(template);
  if (pinned !== null && url.origin !== pinned)
    throw new NodeExecutionError(
      `url's input moved the request from ${pinned} to ${url.origin}; the host written in the url template is the only one requested`,
    );
  for (const [name, valueTemplate] of Object.entries(query))
    url.searchParams.append(name, await renderTemplate(valueTemplate, input, `query.${name}`));
  return url;
}
