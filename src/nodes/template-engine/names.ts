import type { AstNode, ValueNode } from './ast.js';
import { TemplateError, type Value } from './values.js';

/**
 * Names as a template writes them. Only plain identifiers are names: nunjucks' parser accepts
 * more as a Symbol, and such a name would reach nothing the interpreter allows, so it is refused
 * with a message instead.
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A name as written in the template: a plain identifier, nothing else. */
export function templateName(node: AstNode): string {
  const value = node.typename === 'Symbol' ? (node as ValueNode).value : undefined;
  if (typeof value === 'string' && NAME.test(value)) return value;
  throw new TemplateError(typeof value === 'string' ? `'${value}' is not a valid name` : 'expected a name', node);
}

/** A key of a dict literal: `{a: 1}` and `{"a": 1}` both key by the text. */
export function dictKey(node: AstNode): string {
  if (node.typename === 'Symbol') return templateName(node);
  const value = node.typename === 'Literal' ? (node as ValueNode).value : undefined;
  if (typeof value === 'string') return value;
  throw new TemplateError('dict keys must be strings or names', node);
}

/** A key as a message shows it. */
export const keyText = (key: Value): string =>
  typeof key === 'string' || typeof key === 'number' ? String(key) : 'value';

/** `path` read one step further (`a.b`, `a[0]`), for messages; null stays null (not an attribute chain). */
export const extendPath = (path: string | null, key: Value): string | null =>
  path === null ? null : typeof key === 'number' ? `${path}[${key}]` : `${path}.${keyText(key)}`;
