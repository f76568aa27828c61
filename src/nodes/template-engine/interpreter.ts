import type { AstNode, BodyNode, ForNode, IfNode, ListNode, MacroNode, SetNode, SwitchNode, ValueNode } from './ast.js';
import { Expressions } from './expressions.js';
import { type Budget, Output } from './limits.js';
import { macroCallable } from './macros.js';
import { member } from './members.js';
import { templateName } from './names.js';
import { Scope } from './scope.js';
import { type CallbackUrls, callbackUrlFunction } from './callback-url.js';
import { type DataObject, TemplateError, type Value, isPlainObject, ownValue, printValue } from './values.js';

/**
 * Renders a parsed template by walking its statements; the expressions in them are evaluated by
 * `Expressions` (expressions.ts), which holds what a template may reach. Every output step and
 * loop turn ticks the budget, so a long render stops at the time limit.
 */
export function renderTree(root: ListNode, context: DataObject, budget: Budget, callbacks?: CallbackUrls): string {
  const out = new Output();
  const interpreter = new Interpreter(context, budget);
  // Only a render that asked for callback URLs sees the function (an input field of that name is shadowed then).
  if (callbacks) interpreter.root.define('callback_url', callbackUrlFunction(callbacks));
  interpreter.statement(root, interpreter.root, out);
  return out.toString();
}

const LOADING_TAGS: Record<string, string> = {
  Extends: 'extends',
  Include: 'include',
  Import: 'import',
  FromImport: 'from',
  Super: 'super',
};

class Interpreter {
  readonly root = new Scope();
  private readonly expressions: Expressions;
  constructor(
    context: DataObject,
    private readonly budget: Budget,
  ) {
    // A macro's body and a `{% set %}` capture are statements inside an expression.
    this.expressions = new Expressions(context, this.root, budget, (body, scope, out) =>
      this.statement(body, scope, out),
    );
  }

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
        for (const target of n.targets) scope.assign(templateName(target), value);
        return;
      }
      case 'Macro': {
        const n = node as MacroNode;
        const name = templateName(n.name);
        scope.define(name, macroCallable(n, name, null, this.expressions));
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
    return this.expressions.expr(node, scope);
  }

  private loop(node: ForNode, scope: Scope, out: Output): void {
    const unpack = node.name.typename === 'Array';
    const names = unpack
      ? (node.name as ListNode).children.map((child) => templateName(child))
      : [templateName(node.name)];
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
