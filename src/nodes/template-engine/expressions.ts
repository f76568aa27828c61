import type {
  AstNode,
  BinaryNode,
  BodyNode,
  CallNode,
  CompareNode,
  IfNode,
  ListNode,
  LookupNode,
  MacroNode,
  PairNode,
  UnaryNode,
  ValueNode,
} from './ast.js';
import { applyFilter, runTest } from './filters.js';
import { CONSTANTS, GLOBALS } from './globals.js';
import { type Budget, Output, checkGrowth } from './limits.js';
import { macroCallable } from './macros.js';
import { member } from './members.js';
import { dictKey, extendPath, keyText, templateName } from './names.js';
import { arithmetic, compareOnce, contains } from './operators.js';
import type { Scope } from './scope.js';
import { type Args, Callable, type DataObject, TemplateError, type Value, dict, operand, ownValue } from './values.js';

/** Renders a body of statements into `out`: the statement walker's, handed in so that the two stay apart. */
export type RenderBody = (body: AstNode, scope: Scope, out: Output) => void;

const EXPONENT = /^[0-9]+e[0-9]+$/i;

/** A value with the attribute chain it was read by (`a.b[0]`), for messages; null for other expressions. */
interface Located {
  value: Value;
  path: string | null;
  /** The object `value` was read from (a method's string or dict). */
  parent: Value;
}

/**
 * Evaluates a template's expressions. Nothing here runs code the template wrote: names resolve
 * to the template's variables, the input's own fields and the fixed globals; attributes go
 * through `member`; calls reach only Callables; operators are JavaScript's on data. Every
 * expression ticks the budget, so a long render stops at the time limit.
 */
export class Expressions {
  constructor(
    private readonly context: DataObject,
    /** The template's top-level variables, which a macro sees beside its arguments. */
    private readonly root: Scope,
    private readonly budget: Budget,
    private readonly render: RenderBody,
  ) {}

  expr(node: AstNode, scope: Scope): Value {
    this.budget.tick();
    switch (node.typename) {
      case 'Literal':
        return this.literal(node as ValueNode);
      case 'Symbol':
        // nunjucks lexes Jinja's `1e9` as a name; it is a number.
        return EXPONENT.test(String((node as ValueNode).value))
          ? Number((node as ValueNode).value)
          : this.lookup(node, scope);
      case 'LookupVal':
        return this.locate(node, scope).value;
      case 'FunCall':
        return this.call(node as CallNode, scope);
      case 'Filter':
        return this.filter(node as CallNode, scope);
      case 'Group': {
        // nunjucks compiles `(a, b)` to JavaScript's comma operator: the last value.
        let last: Value;
        for (const child of (node as ListNode).children) last = this.expr(child, scope);
        return last;
      }
      case 'Array':
        return (node as ListNode).children.map((child) => this.expr(child, scope));
      case 'Dict':
        return dict(
          ((node as ListNode).children as PairNode[]).map(
            (pair) => [dictKey(pair.key), this.expr(pair.value, scope)] as const,
          ),
        );
      case 'InlineIf': {
        const n = node as IfNode;
        if (this.expr(n.cond, scope)) return this.expr(n.body, scope);
        return n.else_ ? this.expr(n.else_, scope) : '';
      }
      case 'Or': {
        const n = node as BinaryNode;
        return this.expr(n.left, scope) || this.expr(n.right, scope);
      }
      case 'And': {
        const n = node as BinaryNode;
        return this.expr(n.left, scope) && this.expr(n.right, scope);
      }
      case 'Not':
        return !this.expr((node as UnaryNode).target, scope);
      case 'Neg':
        return -operand(this.expr((node as UnaryNode).target, scope));
      case 'Pos':
        return +operand(this.expr((node as UnaryNode).target, scope));
      case 'In': {
        const n = node as BinaryNode;
        return contains(this.expr(n.right, scope), this.expr(n.left, scope), node);
      }
      case 'Is':
        return this.test(node as BinaryNode, scope);
      case 'Compare':
        return this.compare(node as CompareNode, scope);
      case 'Add':
      case 'Concat':
      case 'Sub':
      case 'Mul':
      case 'Div':
      case 'FloorDiv':
      case 'Mod':
      case 'Pow':
        return this.arithmetic(node as BinaryNode, scope);
      case 'Caller':
        return macroCallable(node as MacroNode, 'caller', scope, this);
      case 'Capture':
        return this.capture((node as BodyNode).body, scope);
      default:
        throw new TemplateError(`${node.typename} is not supported in an expression`, node);
    }
  }

  /** The output of a body of statements, as a value (`{% set x %}…`, a macro's result). */
  capture(body: AstNode, scope: Scope): string {
    const out = new Output();
    this.render(body, scope, out);
    return out.toString();
  }

  private literal(node: ValueNode): Value {
    const { value } = node;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as Value;
    throw new TemplateError('regular expression literals (r/…/) are not supported', node);
  }

  /** A name: a variable the template set, a field of the input, a global, or a constant. */
  private lookup(node: AstNode, scope: Scope): Value {
    const name = templateName(node);
    if (scope.has(name)) return scope.get(name);
    if (this.root.has(name)) return this.root.get(name);
    if (Object.hasOwn(this.context, name)) {
      const value = ownValue(this.context, name);
      return value === undefined ? CONSTANTS.get(name) : value;
    }
    return GLOBALS.has(name) ? GLOBALS.get(name) : CONSTANTS.get(name);
  }

  /**
   * `a.b` and `a[k]` with Jinja's undefined rules: a missing field is undefined (prints as ''),
   * None's attributes are undefined, and reading an attribute of an undefined value is an error.
   */
  private locate(node: AstNode, scope: Scope): Located {
    if (node.typename === 'Symbol')
      return { value: this.lookup(node, scope), path: templateName(node), parent: undefined };
    if (node.typename !== 'LookupVal') return { value: this.expr(node, scope), path: null, parent: undefined };
    const n = node as LookupNode;
    const base = this.locate(n.target, scope);
    const key = this.expr(n.val, scope);
    if (base.value === undefined) {
      throw new TemplateError(
        `${base.path === null ? 'a value' : `'${base.path}'`} is undefined, so it has no attribute '${keyText(key)}'`,
        node,
      );
    }
    if (base.value === null) return { value: undefined, path: extendPath('None', key), parent: null };
    return { value: member(base.value, key), path: extendPath(base.path, key), parent: base.value };
  }

  private call(node: CallNode, scope: Scope): Value {
    const callee = this.locate(node.name, scope);
    if (!(callee.value instanceof Callable)) {
      const what = callee.path === null ? 'the value' : `'${callee.path}'`;
      throw new TemplateError(
        `${what} is ${callee.value === undefined ? 'undefined' : 'not a function'} and cannot be called`,
        node,
      );
    }
    const args = this.args(node.args.children, scope);
    this.budget.enterCall();
    try {
      const result = callee.value.invoke(args);
      checkGrowth(result, [callee.parent, ...args.positional, ...args.named.values()]);
      return result;
    } finally {
      this.budget.leaveCall();
    }
  }

  private filter(node: CallNode, scope: Scope): Value {
    const name = (node.name as ValueNode).value;
    const [target, ...rest] = node.args.children;
    const value = target ? this.expr(target, scope) : undefined;
    const args = this.args(rest, scope);
    const result = applyFilter(String(name), value, args);
    checkGrowth(result, [value, ...args.positional, ...args.named.values()]);
    return result;
  }

  private args(children: AstNode[], scope: Scope): Args {
    const args: Args = { positional: [], named: new Map() };
    for (const child of children) {
      if (child.typename !== 'KeywordArgs') args.positional.push(this.expr(child, scope));
      else
        for (const pair of (child as ListNode).children as PairNode[])
          args.named.set(templateName(pair.key), this.expr(pair.value, scope));
    }
    return args;
  }

  /** `x is test` / `x is test(arg)`; `is none` parses as the test named "null", as in nunjucks. */
  private test(node: BinaryNode, scope: Scope): boolean {
    const value = this.expr(node.left, scope);
    const right = node.right;
    if (right.typename === 'FunCall') {
      const { name, args } = right as CallNode;
      return runTest(templateName(name), value, this.args(args.children, scope).positional);
    }
    return runTest(right.typename === 'Symbol' ? templateName(right) : String((right as ValueNode).value), value, []);
  }

  /** Comparisons chain as in Python: `a < b < c` is `a < b and b < c`. */
  private compare(node: CompareNode, scope: Scope): boolean {
    let left = this.expr(node.expr, scope);
    for (const op of node.ops) {
      const right = this.expr(op.expr, scope);
      if (!compareOnce(op.type, left, right, node)) return false;
      left = right;
    }
    return true;
  }

  private arithmetic(node: BinaryNode, scope: Scope): Value {
    const left = this.expr(node.left, scope);
    const right = this.expr(node.right, scope);
    const result = arithmetic(node.typename, left, right);
    checkGrowth(result, [left, right]);
    return result;
  }
}
