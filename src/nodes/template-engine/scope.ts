import type { Value } from './values.js';

/**
 * Variables a template sets (`{% set %}`, loop variables, macro arguments), as nunjucks scopes
 * them: a loop gets its own scope, `set` assigns where the name already lives (up to a macro's
 * scope), else in the current one. Maps, so a name such as `__proto__` is only a name.
 */
export class Scope {
  private readonly vars = new Map<string, Value>();
  constructor(
    private readonly parent: Scope | null = null,
    private readonly isolateWrites = false,
  ) {}

  has(name: string): boolean {
    return this.vars.has(name) || (this.parent?.has(name) ?? false);
  }

  get(name: string): Value {
    return this.vars.has(name) ? this.vars.get(name) : this.parent?.get(name);
  }

  /** A new variable of this scope (a loop variable, an argument). */
  define(name: string, value: Value): void {
    this.vars.set(name, value);
  }

  /** `{% set name = value %}`. */
  assign(name: string, value: Value): void {
    (this.owner(name) ?? this).vars.set(name, value);
  }

  private owner(name: string): Scope | null {
    if (this.vars.has(name)) return this;
    return this.isolateWrites ? null : (this.parent?.owner(name) ?? null);
  }
}
