import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallbackUrls } from './template-engine/callback-url.js';

/**
 * Mints the callback URL of a WaitForCallbackNode of the run a node executes in. The node
 * activity sets it around a node's execution, so every template the node renders (through the
 * one renderer) can call `callback_url("<node id>")`; nothing is set where no run is (previews,
 * partial runs, a batch's inline rows).
 */
export const callbackUrlMinter = new AsyncLocalStorage<(nodeId: string) => string>();

/** `callback_url("id")` or `callback_url('id')`: the ids a template names, written out. */
const CALLBACK_URL_CALL = /callback_url\(\s*(["'])([^"'\\]{1,200})\1\s*\)/g;

/** What a render of `template` needs for `callback_url`; undefined when it does not call it. */
export function callbackUrlsFor(template: string): CallbackUrls | undefined {
  if (!template.includes('callback_url')) return undefined;
  const mint = callbackUrlMinter.getStore();
  if (!mint) return { refused: "callback_url() gives a URL only in a run's nodes (not in a preview or a partial run)" };
  const urls: Record<string, string> = {};
  for (const match of template.matchAll(CALLBACK_URL_CALL)) {
    const id = match[2] as string;
    urls[id] ??= mint(id);
  }
  return { urls };
}

/** The node ids a template's `callback_url(…)` calls name (checked at save against the graph). */
export function callbackUrlTargets(template: string): string[] {
  return [...template.matchAll(CALLBACK_URL_CALL)].map((m) => m[2] as string);
}
