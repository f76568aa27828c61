import { parseTemplate } from './ast.js';
import { renderTree } from './interpreter.js';
import { Budget } from './limits.js';
import type { CallbackUrls } from './callback-url.js';
import { type DataObject, TemplateError } from './values.js';

/** What a render gives back across the thread boundary: the text, or why there is none. */
export type RenderResult = { ok: true; text: string } | { ok: false; message: string };

/** Parses and renders `template` over `context`; every failure becomes a message for the user. */
export function renderSource(template: string, context: DataObject, callbacks?: CallbackUrls): RenderResult {
  try {
    const budget = new Budget();
    return { ok: true, text: renderTree(parseTemplate(template), context, budget, callbacks) };
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  }
}

interface NunjucksSyntaxError extends Error {
  lineno?: number;
  colno?: number;
}

function messageOf(err: unknown): string {
  if (err instanceof TemplateError) return err.message;
  // The parser and the interpreter recurse over the template's nesting.
  if (err instanceof RangeError && /call stack/i.test(err.message)) return 'the template is nested too deeply';
  if (err instanceof Error && err.name === 'Template render error') {
    // nunjucks' syntax errors carry 1-based positions.
    const { lineno, colno } = err as NunjucksSyntaxError;
    return lineno ? `${err.message} (line ${lineno}, column ${colno ?? 0})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
