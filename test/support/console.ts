// What the console's browser tests share: signing in with a password on the way to a console page,
// and axe-core's verdict on the page open.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { UiStack } from './ui';

/** axe-core's own script, injected into the page under test (it is not part of the console). */
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Signs `user` in from a fresh session: opens `path`, is sent to the login page, signs in with the
 * password form and waits until the login page has sent the browser back to `path`.
 */
export async function signIn(stack: UiStack, user: { username: string; password: string }, path: string) {
  const { page, origin } = stack;
  await page.goto('about:blank');
  await stack.browser.context.clearCookies();
  await page.goto(`${origin}${path}`);
  await page.waitForURL(/\/login\?next=/);
  const form = page.getByRole('form', { name: 'Sign in with a password' });
  await form.getByLabel('Username').fill(user.username);
  await form.getByLabel('Password', { exact: true }).fill(user.password);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}${path}`);
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousAccessibilityProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string | null; help: string }> }> };
      }
    ).axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}
