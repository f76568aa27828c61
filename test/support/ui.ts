import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startEngine, type Engine } from './engine';
import { openBrowser, type TestBrowser } from './browser';

/** A real engine (api in process + worker process) serving PySpur's UI, and a browser on it. */
export interface UiStack {
  engine: Engine;
  browser: TestBrowser;
  page: Page;
  /** `http://127.0.0.1:<port>`: the UI at `/`, the API at `/api`. */
  origin: string;
  close(): Promise<void>;
}

export async function startUiStack(overrides: Record<string, string> = {}): Promise<UiStack> {
  const engine = await startEngine(overrides);
  const browser = await openBrowser().catch(async (err: unknown) => {
    await engine.close();
    throw err;
  });
  return {
    engine,
    browser,
    page: browser.page,
    origin: engine.api.baseUrl.replace(/\/api$/, ''),
    async close() {
      await browser.close();
      await engine.close();
    },
  };
}

/** Each browser test ends with this: no failed `/api` call, no uncaught error in the page. */
export function assertNoProblems(browser: TestBrowser): void {
  assert.deepEqual(browser.problems, [], `the UI met problems:\n${browser.problems.join('\n')}`);
}

/** Opens the dashboard; a fresh profile sees PySpur's welcome dialog once, which this closes. */
export async function openDashboard(stack: UiStack, firstVisit: boolean): Promise<void> {
  await stack.page.goto(`${stack.origin}/dashboard`);
  if (firstVisit) await stack.page.getByRole('button', { name: 'Get Started' }).click();
  await stack.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

/** Opens the editor's run dialog, waits for the test case showing `testCaseText`, and runs it. */
export async function runFromEditor(page: Page, testCaseText: string): Promise<void> {
  await page.locator('#workflow-actions-buttons button').first().click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText(testCaseText).first().waitFor();
  await dialog.getByRole('button', { name: /^Run/ }).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** Node definitions as the editor writes them (it needs coordinates to draw a node). */
export function placed<T extends object>(nodes: T[]): (T & { coordinates: { x: number; y: number } })[] {
  return nodes.map((node, i) => ({ ...node, coordinates: { x: 80 + i * 380, y: 120 } }));
}
