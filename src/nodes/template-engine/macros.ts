import type { AstNode, ListNode, MacroNode, PairNode } from './ast.js';
import { templateName } from './names.js';
import { Scope } from './scope.js';
import { Callable, type Value } from './values.js';

/** What a macro's call needs of the interpreter: its default values and its body's output. */
export interface MacroBody {
  expr(node: AstNode, scope: Scope): Value;
  capture(body: AstNode, scope: Scope): string;
}

/**
 * A macro (or a `{% call %}` block's `caller`) as a Callable. Arguments bind as in nunjucks:
 * positional ones in order (spilling into the defaulted ones), keyword ones by name, missing
 * ones to their default. A macro sees its arguments and the template's top-level variables; a
 * caller also sees the scope it was written in.
 */
export function macroCallable(node: MacroNode, label: string, closure: Scope | null, interpreter: MacroBody): Callable {
  const params: string[] = [];
  let defaults: PairNode[] = [];
  node.args.children.forEach((arg, i) => {
    if (i === node.args.children.length - 1 && arg.typename === 'KeywordArgs')
      defaults = (arg as ListNode).children as PairNode[];
    else params.push(templateName(arg));
  });
  const defaultNames = defaults.map((pair) => templateName(pair.key));
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
      scope.define(name, given.has(name) ? given.get(name) : interpreter.expr(pair.value, scope));
    });
    return interpreter.capture(node.body, scope);
  });
}
