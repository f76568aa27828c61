import { NodeExecutionError } from './errors.js';
import { renderInThread } from './template-engine/pool.js';
import type { DataObject } from './template-engine/values.js';
import { callbackUrlsFor } from './callback-urls.js';

/**
 * Jinja-style templates: the one renderer of every template in the service (LLM prompts,
 * integration `*_template` fields, the Retriever's and Exa's queries, RAG chunk templates).
 *
 * Templates are data to the service: src/nodes/template-engine interprets them (nunjucks' syntax,
 * Jinja's undefined rules, Python's printing of None/True/dicts) without ever running JavaScript
 * they could shape, on a pool of worker threads with time, output and memory limits.
 */

// The delimiters that start a tag, an expression or a comment: text without them renders as itself.
const TEMPLATE_SYNTAX = /\{[{%#]/;

/**
 * Renders `template` over `context`. Syntax errors, reads through undefined values and renders
 * over a limit throw NodeExecutionError; `name` (e.g. the config field) prefixes the message.
 */
export async function renderTemplate(
  template: string,
  context: Record<string, unknown>,
  name = 'template',
): Promise<string> {
  if (!TEMPLATE_SYNTAX.test(template)) return template;
  const callbacks = callbackUrlsFor(template);
  const result = await renderInThread({
    template,
    context: context as DataObject,
    ...(callbacks ? { callbacks } : {}),
  });
  if (result.ok) return result.text;
  throw new NodeExecutionError(`Error rendering ${name}: ${result.message}`);
}
