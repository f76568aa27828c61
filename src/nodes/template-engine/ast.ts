/**
 * The syntax tree of a template, as nunjucks' parser builds it. Only the parser is used: nunjucks'
 * compiler turns templates into JavaScript source and runs it, and a name such as `a"&&…` reaches
 * that source unescaped, so templates are never compiled; interpreter.ts walks this tree instead.
 */

/** A parsed node: `typename` says which fields it has (see the interfaces below). */
export interface AstNode {
  readonly typename: string;
  readonly lineno: number;
  readonly colno: number;
}
export interface ListNode extends AstNode {
  readonly children: AstNode[];
}
export interface ValueNode extends AstNode {
  readonly value: unknown;
}
export interface PairNode extends AstNode {
  readonly key: AstNode;
  readonly value: AstNode;
}
export interface LookupNode extends AstNode {
  readonly target: AstNode;
  readonly val: AstNode;
}
export interface IfNode extends AstNode {
  readonly cond: AstNode;
  readonly body: AstNode;
  readonly else_: AstNode | null | undefined;
}
export interface ForNode extends AstNode {
  readonly arr: AstNode;
  readonly name: AstNode;
  readonly body: AstNode;
  readonly else_: AstNode | null | undefined;
}
export interface MacroNode extends AstNode {
  readonly name: AstNode;
  readonly args: ListNode;
  readonly body: AstNode;
}
export interface CallNode extends AstNode {
  readonly name: AstNode;
  readonly args: ListNode;
}
export interface SetNode extends AstNode {
  readonly targets: AstNode[];
  readonly value: AstNode | null;
  readonly body?: AstNode;
}
export interface BodyNode extends AstNode {
  readonly body: AstNode;
}
export interface UnaryNode extends AstNode {
  readonly target: AstNode;
}
export interface BinaryNode extends AstNode {
  readonly left: AstNode;
  readonly right: AstNode;
}
export interface CompareNode extends AstNode {
  readonly expr: AstNode;
  readonly ops: { readonly expr: AstNode; readonly type: string }[];
}
export interface SwitchNode extends AstNode {
  readonly expr: AstNode;
  readonly cases: { readonly cond: AstNode; readonly body: ListNode }[];
  readonly default?: AstNode;
}

interface NunjucksParser {
  parse(src: string): ListNode;
}
// nunjucks ships no type declarations (hence `require`); the parser is plain data in, tree out.
const parser = require('nunjucks/src/parser') as NunjucksParser;

/** Parses `src`; nunjucks' TemplateError (with 0-based line and column) on bad syntax. */
export function parseTemplate(src: string): ListNode {
  return parser.parse(src);
}
