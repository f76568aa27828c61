import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { SCOPED_BUILTINS, withScopedBuiltins } from '../../temporal/workflow-bundle';

/** The globals the SDK's workflow sandbox replaces, read from the SDK's own source (its `global.X = …` lines). */
function replacedBySandbox(): string[] {
  const source = readFileSync(require.resolve('@temporalio/workflow/lib/global-overrides.js'), 'utf8');
  return [...source.matchAll(/\bglobal\.(\w+)\s*=/g)].map((m) => m[1] as string);
}

/** A bundle of webpack's shape, its module reading `names` at run time. */
const bundleReading = (names: string) =>
  `var __TEMPORAL__;\n/******/ (() => { // webpackBootstrap\n__TEMPORAL__ = [${names}];\n/******/ })()\n;\n//# sourceMappingURL=data:,\n`;

describe('the workflow bundle', () => {
  it('reads from its own scope none of the globals the workflow sandbox replaces', () => {
    const replaced = replacedBySandbox();
    // The SDK's list as of 1.24: if it finds none, the pattern no longer reads the SDK's source.
    assert.ok(replaced.includes('Date') && replaced.includes('setTimeout'), `read: ${replaced.join(', ')}`);
    const scoped: readonly string[] = SCOPED_BUILTINS;
    assert.deepEqual(
      replaced.filter((name) => scoped.includes(name)),
      [],
    );
  });

  it('binds the scoped built-ins as it loads; what the sandbox replaces is read when used', () => {
    const context = vm.createContext({});
    const code = withScopedBuiltins(bundleReading('() => [Math.PI, Date.name]'));
    vm.runInContext(code, context);
    const loadedPi = vm.runInContext('Math.PI', context) as unknown;
    vm.runInContext('globalThis.Math = { PI: 3 }; globalThis.Date = function WorkflowDate() {}', context);
    const [math, date] = vm.runInContext('__TEMPORAL__[0]()', context) as [unknown, string];
    assert.equal(math, loadedPi);
    assert.equal(date, 'WorkflowDate');
  });

  it('keeps every line where it was, so the inline source map still points at the sources', () => {
    const code = bundleReading('Object');
    const wrapped = withScopedBuiltins(code);
    assert.equal(wrapped.split('\n').length, code.split('\n').length);
    assert.equal(wrapped.split('\n')[2], code.split('\n')[2]);
  });

  it('refuses code without webpack’s bootstrap, or with it twice, rather than wrap it wrongly', () => {
    assert.throws(() => withScopedBuiltins('var __TEMPORAL__ = 1;\n'), /exactly once/);
    const twice = bundleReading('Object') + bundleReading('Array');
    assert.throws(() => withScopedBuiltins(twice), /exactly once/);
  });
});
