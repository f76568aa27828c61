import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startEngine, startSplitEngine, waitForRun, type Engine, type SplitEngine } from './engine';
import { openBrowser, type TestBrowser } from './browser';

/** A real engine serving PySpur's UI, and a browser on it. */
export interface UiStack<E extends Engine = Engine> {
  engine: E;
  browser: TestBrowser;
  page: Page;
  /** `http://127.0.0.1:<port>`: the UI at `/`, the API at `/api`. */
  origin: string;
  close(): Promise<void>;
}

/** The UI on `npm run dev`'s topology: the api hosts the worker. */
export const startUiStack = (overrides: Record<string, string> = {}): Promise<UiStack> =>
  uiStackOn(startEngine(overrides));

/** The UI on production's topology: the worker a process of its own, which a test may stop and start. */
export const startSplitUiStack = (overrides: Record<string, string> = {}): Promise<UiStack<SplitEngine>> =>
  uiStackOn(startSplitEngine(overrides));

async function uiStackOn<E extends Engine>(starting: Promise<E>): Promise<UiStack<E>> {
  const engine = await starting;
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

/** Opens the dashboard; while there are no workflows PySpur shows a welcome dialog, which this closes. */
export async function openDashboard(stack: UiStack, noWorkflowsYet: boolean): Promise<void> {
  await stack.page.goto(`${stack.origin}/dashboard`);
  if (noWorkflowsYet) await stack.page.getByRole('button', { name: 'Get Started' }).click();
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

/** Dashboard → "New Spur" → Create: the editor of the new workflow; resolves with its id. */
export async function createSpur(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'New Spur' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(/\/workflows\/S\d+$/);
  await page.locator('.react-flow__node[data-id="input_node"]').waitFor();
  return page.url().split('/').pop()!;
}

/** Dashboard → a template's "Use Template": the editor of the new workflow; resolves with its id. */
export async function useTemplate(page: Page, templateName: string): Promise<string> {
  const card = page
    .locator('div', { has: page.getByText(templateName, { exact: true }) })
    .filter({ has: page.getByRole('button', { name: 'Use Template' }) })
    .last();
  await card.getByRole('button', { name: 'Use Template' }).click();
  await page.waitForURL(/\/workflows\/S\d+$/);
  return page.url().split('/').pop()!;
}

/** The editor's node panel: search, pick, and resolve with the new node's id. */
export async function addNode(page: Page, search: string, label: string, nodeType: string): Promise<string> {
  const nodes = page.locator(`.react-flow__node-${nodeType}`);
  const before = await nodes.count();
  // On a loaded machine a pick can land while the filtered list re-renders and add nothing (adding
  // is the page's own state, no request): pick again until the node is there, at most three times.
  for (let attempt = 1; (await nodes.count()) === before; attempt++) {
    if (attempt > 3) throw new Error(`no ${nodeType} was added after three picks of '${label}'`);
    const searchBox = page.getByPlaceholder('Search nodes...');
    if (!(await searchBox.isVisible())) await page.locator('[data-node-panel] button').first().click();
    await searchBox.fill(search);
    await page.getByText(label, { exact: true }).click();
    for (let waited = 0; waited < 10_000 && (await nodes.count()) === before; waited += 250)
      await new Promise((r) => setTimeout(r, 250));
  }
  const added = nodes.last();
  await added.waitFor();
  const id = await added.getAttribute('data-id');
  assert.ok(id, 'the added node has an id');
  return id;
}

/** Drags from one node's output handle to another's input handle, as a user connects them. */
export async function connect(page: Page, sourceId: string, targetId: string): Promise<void> {
  const source = page.locator(`.react-flow__node[data-id="${sourceId}"] .react-flow__handle.source`).first();
  await source.dragTo(page.locator(`.react-flow__node[data-id="${targetId}"] .react-flow__handle.target`).first());
  await page.locator('.react-flow__edge').first().waitFor();
}

/**
 * Dashboard → the Python data-cleaning template → run its test case in the editor, until the
 * output node's card shows the cleaned row; resolves with the run as the api reports it at its end.
 */
export async function runCleaningTemplate(
  stack: UiStack,
): Promise<{ id: string; workflow_id: string; status: string; outputs: Record<string, any> }> {
  const { page, engine } = stack;
  await openDashboard(stack, false);
  const workflowId = await useTemplate(page, 'Clean a list of contacts with Python');
  await page.locator('.react-flow__node[data-id="clean"]').waitFor();
  await runFromEditor(page, 'ada@example.org');
  await page
    .locator('.react-flow__node[data-id="cleaned"]')
    .getByText('Ada Lovelace')
    .first()
    .waitFor({ timeout: 90_000 });
  const [started] = (await engine.http.get(`/wf/${workflowId}/runs/`)).body;
  return waitForRun(engine.http, started.id, undefined, 60_000);
}

/** The login page's password form: signs `username` in and waits for the page it sends the browser on to. */
export async function signInWithPassword(stack: UiStack, username: string, password: string): Promise<void> {
  const { page, origin } = stack;
  await page.goto(`${origin}/dashboard`);
  await page.waitForURL(/\/login\?next=%2Fdashboard$/);
  const form = page.getByRole('form', { name: 'Sign in with a password' });
  await form.getByLabel('Username').fill(username);
  await form.getByLabel('Password', { exact: true }).fill(password);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/dashboard`);
}
