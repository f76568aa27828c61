import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { assertNoProblems, createSpur, startUiStack, type UiStack } from '../support/ui';

const KEY = 'spur_browser-test-key';

describe('browser: logging in when API keys are set', function () {
  this.timeout(180_000);
  let stack: UiStack;
  before(async () => {
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(KEY) });
  });
  after(async () => stack?.close());

  it('sends the browser to the login page; a wrong key is refused; the right key lets it in', async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/dashboard`);
    await page.waitForURL(/\/login\?next=%2Fdashboard$/);
    await page.getByLabel('API key', { exact: true }).fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.getByRole('alert').getByText('That API key is not valid.').waitFor();
    assert.deepEqual(await stack.browser.context.cookies(), [], 'no cookie for a wrong key');

    await page.getByLabel('API key', { exact: true }).fill(KEY);
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.waitForURL(`${origin}/dashboard`);
    await page.getByRole('button', { name: 'Get Started' }).click();
    await page.getByText('Expense approval with a human pause').waitFor();
    const [cookie] = await stack.browser.context.cookies();
    assert.equal(cookie?.name, 'spur_session');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    assert.ok(cookie!.expires > Date.now() / 1000, 'it expires');
    // The UI's own calls, including state changes, now pass with the cookie alone.
    await createSpur(page);
    assertNoProblems(stack.browser);
  });

  it('lets nothing else in: without the cookie the API answers 401 and pages go back to login', async () => {
    await stack.browser.context.clearCookies();
    const status = await stack.page.evaluate(async () => (await fetch('/api/wf/')).status);
    assert.equal(status, 401);
    await stack.page.goto(`${stack.origin}/workflows/S1`);
    await stack.page.waitForURL(/\/login\?next=%2Fworkflows%2FS1$/);
  });
});
