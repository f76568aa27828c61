import type {
  AstNode,
  BinaryNode,
  BodyNode,
  CallNode,
  CompareNode,
  ForNode,
  IfNode,
  ListNode,
  LookupNode,
  MacroNode,
  PairNode,
  SetNode,
  SwitchNode,
  UnaryNode,
  ValueNode,
} from './ast.js';
import { applyFilter, runTest } from './filters.js';
import { CONSTANTS, GLOBALS } from './globals.js';
import { type Budget, Output, checkGrowth } from './limits.js';
import { member } from './members.js';
import { Scope } from './scope.js';
import {
  type Args,
  Callable,
  type DataObject,
  TemplateError,
  type Value,
  dict,
  isPlainObject,
  operand,
  ownValue,
  printValue,
} from './values.js';

/**
 * Renders a parsed template by walking its tree. Nothing here runs code the template wrote:
 * names resolve to the template's variables, the input's own fields and the fixed globals;
 * attributes go through `member`; calls reach only Callables; operators are JavaScript's on data.
 * Every step ticks the budget, so a long render stops at the time limit.
 */
export function renderTree(root: ListNode, context: DataObject, budget: Budget): string {
  const out = new Output();
  const interpreter = new Interpreter(context, budget);
  interpreter.statement(root, interpreter.root, out);
  return out.toString();
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const EXPONENT = /^[0-9]+e[0-9]+$/i;
const LOADING_TAGS: Record<string, string> = {
  Extends: 'extends',
  Include: 'include',
  Import: 'import',
  FromImport: 'from',
  Super: 'super',
};

/** An attribute chain as it reads (`a.b[0]`), for messages; null for other expressions. */
interface Located {
  value: Value;
  path: string | null;
  /** The object `value` was read from (a method's string or dict). */
  parent: Value;
}

const keyText = (key: Value): string => (typeof key === 'string' || typeof key === 'number' ? String(key) : 'value');
const step = (path: string | null, key: Value): string | null =>
  path === null ? null : typeof key === 'number' ? `${path}[${key}]` : `${path}.${keyText(key)}`;

class Interpreter {
  readonly root = new Scope();
  constructor(
    private readonly context: DataObject,
    private readonly budget: Budget,
  ) {}

  statement(node: AstNode, scope: Scope, out: Output): void {
    switch (node.typename) {
      case 'Root':
      case 'NodeList':
        for (const child of (node as ListNode).children) this.statement(child, scope, out);
        return;
      case 'Output':
        for (const child of (node as ListNode).children) {
          this.budget.tick();
          out.write(
            child.typename === 'TemplateData'
              ? String((child as ValueNode).value ?? '')
              : printValue(this.expr(child, scope)),
          );
        }
        return;
      case 'If':
      case 'IfAsync': {
        const n = node as IfNode;
        if (this.expr(n.cond, scope)) this.statement(n.body, scope, out);
        else if (n.else_) this.statement(n.else_, scope, out);
        return;
      }
      case 'For':
      case 'AsyncEach':
      case 'AsyncAll':
        return this.loop(node as ForNode, scope, out);
      case 'Set': {
        const n = node as SetNode;
        // `{% set x %}…{% endset %}`: the body is a Capture, which evaluates to its output.
        const value = this.expr(n.value ?? (n.body as AstNode), scope);
        for (const target of n.targets) scope.assign(this.name(target), value);
        return;
      }
      case 'Macro': {
        const n = node as MacroNode;
        const name = this.name(n.name);
        scope.define(name, this.macro(n, name, null));
        return;
      }
      case 'Switch':
        return this.switch(node as SwitchNode, scope, out);
      case 'Block':
        // Without `extends`, a block is rendered where it stands.
        return this.statement((node as BodyNode).body, scope, out);
      default: {
        const tag = LOADING_TAGS[node.typename];
        if (tag) throw new TemplateError(`{% ${tag} %} is not available: a template cannot load other templates`, node);
        throw new TemplateError(`${node.typename} is not supported`, node);
      }
    }
  }

  private expr(node: AstNode, scope: Scope): Value {
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
            (pair) => [this.dictKey(pair.key), this.expr(pair.value, scope)] as const,
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
        return this.contains(this.expr(n.right, scope), this.expr(n.left, scope), node);
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
        return this.macro(node as MacroNode, 'caller', scope);
      case 'Capture':
        return this.capture((node as BodyNode).body, scope);
      default:
        throw new TemplateError(`${node.typename} is not supported in an expression`, node);
    }
  }

  private literal(node: ValueNode): Value {
    const { value } = node;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as Value;
    throw new TemplateError('regular expression literals (r/…/) are not supported', node);
  }

  /** A name: a variable the template set, a field of the input, a global, or a constant. */
  private lookup(node: AstNode, scope: Scope): Value {
    const name = this.name(node);
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
      return { value: this.lookup(node, scope), path: this.name(node), parent: undefined };
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
    if (base.value === null) return { value: undefined, path: step('None', key), parent: null };
    return { value: member(base.value, key), path: step(base.path, key), parent: base.value };
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
          args.named.set(this.name(pair.key), this.expr(pair.value, scope));
    }
    return args;
  }

  /** `x is test` / `x is test(arg)`; `is none` parses as the test named "null", as in nunjucks. */
  private test(node: BinaryNode, scope: Scope): boolean {
    const value = this.expr(node.left, scope);
    const right = node.right;
    if (right.typename === 'FunCall') {
      const { name, args } = right as CallNode;
      return runTest(this.name(name), value, this.args(args.children, scope).positional);
    }
    return runTest(right.typename === 'Symbol' ? this.name(right) : String((right as ValueNode).value), value, []);
  }

  private contains(haystack: Value, needle: Value, node: AstNode): boolean {
    if (Array.isArray(haystack)) return haystack.includes(needle);
    if (typeof haystack === 'string') return haystack.includes(String(needle));
    if (isPlainObject(haystack)) return Object.hasOwn(haystack, String(needle));
    throw new TemplateError(
      `cannot use 'in' to search for '${keyText(needle)}' in ${printValue(haystack) || 'an undefined value'}`,
      node,
    );
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
    const [a, b] = [operand(left), operand(right)];
    const results: Record<string, () => Value> = {
      Add: () => a + b,
      Concat: () => a + '' + b,
      Sub: () => a - b,
      Mul: () => a * b,
      Div: () => a / b,
      FloorDiv: () => Math.floor(a / b),
      Mod: () => a % b,
      Pow: () => Math.pow(a, b),
    };
    const result = (results[node.typename] as () => Value)();
    checkGrowth(result, [left, right]);
    return result;
  }

  private loop(node: ForNode, scope: Scope, out: Output): void {
    const unpack = node.name.typename === 'Array';
    const names = unpack ? (node.name as ListNode).children.map((child) => this.name(child)) : [this.name(node.name)];
    const items = iterate(this.expr(node.arr, scope), unpack);
    const inner = new Scope(scope);
    const length = items.length;
    for (let i = 0; i < length; i++) {
      this.budget.tick();
      const item = items.item(i);
      names.forEach((name, u) =>
        inner.define(name, !unpack ? item : item === undefined || item === null ? undefined : member(item, u)),
      );
      inner.define('loop', {
        index: i + 1,
        index0: i,
        revindex: length - i,
        revindex0: length - i - 1,
        first: i === 0,
        last: i === length - 1,
        length,
      });
      this.statement(node.body, inner, out);
    }
    if (length === 0 && node.else_) this.statement(node.else_, inner, out);
  }

  /** nunjucks' switch: cases compared with `===`, an empty case falls through to the next. */
  private switch(node: SwitchNode, scope: Scope, out: Output): void {
    const value = this.expr(node.expr, scope);
    let matched = false;
    for (const c of node.cases) {
      matched ||= this.expr(c.cond, scope) === value;
      if (matched && c.body.children.length) return this.statement(c.body, scope, out);
    }
    if (node.default) this.statement(node.default, scope, out);
  }

  /**
   * A macro (or a `{% call %}` block's `caller`) as a Callable. Arguments bind as in nunjucks:
   * positional ones in order (spilling into the defaulted ones), keyword ones by name, missing
   * ones to their default. A macro sees its arguments and the template's top-level variables; a
   * caller also sees the scope it was written in.
   */
  private macro(node: MacroNode, label: string, closure: Scope | null): Callable {
    const params: string[] = [];
    let defaults: PairNode[] = [];
    node.args.children.forEach((arg, i) => {
      if (i === node.args.children.length - 1 && arg.typename === 'KeywordArgs')
        defaults = (arg as ListNode).children as PairNode[];
      else params.push(this.name(arg));
    });
    const defaultNames = defaults.map((pair) => this.name(pair.key));
    return new Callable(label, ({ positional, named }) => {
      const scope = new Scope(closure, true);
      const given = new Map(named);
      positional.forEach((value, i) => {
        if (i < params.length) scope.define(params[i] as string, value);
        else if (i - params.length < defaultNames.length) given.set(defaultNames[i - params.length] as string, value);
      });
      params.slice(positional.length).forEach((param) => scope.define(param, given.get(param)));
      if (given.has('caller')) scope.define('caller', given.get('caller'));
      defaults.forEach((pair, i) => {
        const name = defaultNames[i] as string;
        scope.define(name, given.has(name) ? given.get(name) : this.expr(pair.value, scope));
      });
      return this.capture(node.body, scope);
    });
  }

  private capture(body: AstNode, scope: Scope): string {
    const out = new Output();
    this.statement(body, scope, out);
    return out.toString();
  }

  /** A name as written in the template: a plain identifier, nothing else. */
  private name(node: AstNode): string {
    const value = node.typename === 'Symbol' ? (node as ValueNode).value : undefined;
    if (typeof value === 'string' && NAME.test(value)) return value;
    throw new TemplateError(typeof value === 'string' ? `'${value}' is not a valid name` : 'expected a name', node);
  }

  private dictKey(node: AstNode): string {
    if (node.typename === 'Symbol') return this.name(node);
    const value = node.typename === 'Literal' ? (node as ValueNode).value : undefined;
    if (typeof value === 'string') return value;
    throw new TemplateError('dict keys must be strings or names', node);
  }
}

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '==': (a, b) => a == b,
  '===': (a, b) => a === b,
  '!=': (a, b) => a != b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '>': (a, b) => a > b,
  '<=': (a, b) => a <= b,
  '>=': (a, b) => a >= b,
};

function compareOnce(op: string, left: Value, right: Value, node: AstNode): boolean {
  const compare = COMPARE[op];
  if (!compare) throw new TemplateError(`unknown comparison '${op}'`, node);
  return compare(operand(left), operand(right));
}

/**
 * What `for` walks: a list's items, a string's characters, a dict's keys (or key and value with
 * two names, as nunjucks does). Anything else has nothing to walk, so the `else` branch runs.
 */
function iterate(items: Value, pairs: boolean): { length: number; item(i: number): Value } {
  if (Array.isArray(items) || typeof items === 'string') return { length: items.length, item: (i) => items[i] };
  if (isPlainObject(items)) {
    const keys = Object.keys(items);
    return { length: keys.length, item: (i) => (pairs ? [keys[i], ownValue(items, keys[i] as string)] : keys[i]) };
  }
  return { length: 0, item: () => undefined };
}
