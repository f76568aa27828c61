// The one builder of the workflow bundle: the image and the test harness prebuild it
// (scripts/build-bundle.ts), a worker without a prebuilt one (npm run dev) builds it as it starts,
// and the replay gate replays recorded histories against it. Two things here make each workflow
// cheaper to run than the SDK's default bundle (docs/performance.md, "The workflow bundle"):
//
// - Spur's workflow modules are loaded once per workflow thread, not once per workflow. The SDK's
//   reusable V8 context gives every workflow a fresh copy of each module it imports (its module
//   cache is per workflow) unless the module is preloaded into the shared cache. Spur's workflow
//   code keeps no per-workflow state at module level (module-level `let`, `var` and mutable
//   collections are refused there by eslint: eslint.config.mjs, "workflow modules"), so the whole
//   graph is preloaded. Preloaded modules are frozen by the SDK, which also keeps one workflow
//   from changing what another sees.
// - Built-in globals are read from the bundle's own scope. Inside the sandbox's `vm` context every
//   global read (`Object`, `Math`, `JSON`…) goes through the context's interceptor into C++; a
//   loop calling `Math.imul` ran 40 times slower than with the same function held in a local.
//   The bundle's outermost function takes the built-ins as parameters, so every read below is a
//   closure read. Only built-ins the SDK never replaces are taken: it replaces `Date`,
//   `setTimeout`, `clearTimeout`, `WeakRef` and `FinalizationRegistry` to keep workflows
//   deterministic (`Math.random` is replaced on the `Math` object itself, which is shared).
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKSPACE_WORKFLOW_INTERCEPTOR } from './workspace-activities';

const WORKFLOWS_PATH = path.join(__dirname, 'workflows');

/** The built-ins read from the bundle's scope: never replaced by the SDK's workflow sandbox (test/unit/workflow-bundle.test.ts). */
export const SCOPED_BUILTINS = [
  'globalThis',
  'Object',
  'Array',
  'JSON',
  'Math',
  'String',
  'Number',
  'Boolean',
  'Symbol',
  'Reflect',
  'Proxy',
  'Promise',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'Function',
  'BigInt',
  'Uint8Array',
  'ArrayBuffer',
  'isNaN',
  'parseInt',
  'parseFloat',
] as const;

/** webpack's bootstrap: the bundle's outermost function, opened once and called once. */
const OPENING = '/******/ (() => { // webpackBootstrap\n';
const CALL = '\n/******/ })()\n';

/**
 * The bundle with its outermost function taking the built-ins as parameters. Both edits stay on
 * their own lines, so the inline source map's lines and the mapped columns are unchanged.
 */
export function withScopedBuiltins(code: string): string {
  for (const marker of [OPENING, CALL])
    if (code.indexOf(marker) === -1 || code.indexOf(marker) !== code.lastIndexOf(marker))
      throw new Error(`workflow bundle: expected webpack's bootstrap line ${JSON.stringify(marker)} exactly once`);
  const names = SCOPED_BUILTINS.join(', ');
  return code
    .replace(OPENING, `/******/ ((${names}) => { // webpackBootstrap\n`)
    .replace(CALL, `\n/******/ })(${names})\n`);
}

/** The workflow bundle's code, inline source map included. */
export async function workflowBundleCode(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [WORKSPACE_WORKFLOW_INTERCEPTOR],
    preloadModules: [WORKFLOWS_PATH, WORKSPACE_WORKFLOW_INTERCEPTOR],
    logger: quietLogger,
  });
  return withScopedBuiltins(code);
}

const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
