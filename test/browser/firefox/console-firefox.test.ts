// The console in Firefox (Debian's firefox-esr, driven over WebDriver BiDi by puppeteer-core:
// Playwright drives only its own patched Firefox, which nothing here may download). The same
// screens the Chromium tests cover, reached and acted on with the keyboard alone.
import assert from 'node:assert/strict';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { hashApiKey } from '../../../src/http/api-keys';
import { bearer, makeUser } from '../../support/access';
import { gated } from '../../support/approvals';
import { type Engine, startEngine, waitForRun } from '../../support/engine';
import { until } from '../../support/exec-log';
import { input, l, n } from '../../support/graphs';
import { client } from '../../support/http';
import { settingsReachWorkers } from '../../support/settings';
import { type FakeLlmServer, startFakeLlmServer } from '../../support/fake-llm-server';
import { fakeProviderSettings } from '../../support/llm-engine';

const FIREFOX = process.env.SPUR_FIREFOX || '/usr/bin/firefox-esr';
const ADMIN_KEY = 'spur_console-firefox-admin-key-0123456789';
const OPERATOR = { username: 'fiona-operator', password: 'an operator password' };

describe('browser: the console in Firefox, by keyboard', function () {
  this.timeout(240_000);
  let engine: Engine;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let admin: ReturnType<typeof client>;
  const problems: string[] = [];

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    origin = engine.api.baseUrl.replace(/\/api$/, '');
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    await makeUser(admin, { ...OPERATOR, role: 'operator' });
    browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true });
    page = await browser.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${String(err)}`));
    page.on('response', (res) => {
      if (res.url().includes('/api/') && res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await engine?.close();
  });

  const focusedText = () => page.evaluate('document.activeElement?.textContent') as Promise<string | undefined>;

  /** Presses Tab until the focused element matches `selector`; fails past `most` presses. */
  async function tabTo(selector: string, most = 40): Promise<void> {
    for (let i = 0; i < most; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
    }
    assert.fail(`Tab never reached ${selector}`);
  }

  it('signs in, lists a run and opens its page with a timeline, by keyboard', async () => {
    const wf = (await admin.post('/wf/', { name: 'firefox gated', definition: gated({}, 'ok?') })).body;
    const run = (await admin.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'firefox' } } })).body;
    await waitForRun(admin, run.id, (r) => r.status === 'PAUSED');

    await page.goto(`${origin}/console/runs`);
    await page.waitForSelector('#username');
    await page.type('#username', OPERATOR.username);
    await page.type('#password', OPERATOR.password);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    assert.equal(new URL(page.url()).pathname, '/console/runs');
    await page.waitForSelector(`tr[data-run="${run.id}"]`);

    await tabTo(`tr[data-run="${run.id}"] a`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('svg g[data-node="gate"]');
    assert.equal(new URL(page.url()).pathname, `/console/runs/${run.id}`);
    assert.match(await page.$eval('h1', (h) => h.textContent ?? ''), new RegExp(`Run ${run.id} PAUSED`));
    assert.deepEqual(problems, []);
  });

  it('approves a pause with a comment from the inbox, by keyboard; the API reports the decision', async () => {
    const wf = (await admin.post('/wf/', { name: 'firefox inbox', definition: gated({}, 'ok?') })).body;
    const run = (await admin.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'decide me' } } })).body;
    await waitForRun(admin, run.id, (r) => r.status === 'PAUSED');
    await page.goto(`${origin}/console/approvals`);
    const card = `article[data-run="${run.id}"]`;
    await page.waitForSelector(card);
    await tabTo(`${card} input[name="comments"]`);
    await page.keyboard.type('fine by firefox');
    await tabTo(`${card} button`, 3); // the first decision after the comment: Approve
    assert.equal(await focusedText(), 'Approve');
    await page.keyboard.press('Enter');
    assert.equal((await waitForRun(admin, run.id, (r) => r.status === 'COMPLETED', 60_000)).status, 'COMPLETED');
    const [pause] = (await admin.get(`/wf/pause_history/${run.id}/`)).body;
    assert.deepEqual([pause.resume_action, pause.comments], ['APPROVE', 'fine by firefox']);
    assert.deepEqual(problems, []);
  });

  it('pauses a schedule by keyboard, and draws the usage chart of a model call', async () => {
    const wf = (await admin.post('/wf/', { name: 'firefox schedule', definition: gated({}, 'ok?') })).body;
    const schedule = (
      await admin.post(`/wf/${wf.id}/schedules/`, { interval_seconds: 3600, initial_inputs: { in: { x: 's' } } })
    ).body;
    await page.goto(`${origin}/console/schedules`);
    await page.waitForSelector(`tr[data-schedule="${schedule.id}"]`);
    await tabTo(`tr[data-schedule="${schedule.id}"] button`);
    assert.equal(await focusedText(), `Pause ${schedule.id}`);
    await page.keyboard.press('Enter');
    await until(
      'the schedule to pause',
      async () => (await admin.get(`/schedules/${schedule.id}/`)).body.paused,
      30_000,
    );
    assert.equal((await admin.get(`/schedules/${schedule.id}/`)).body.paused, true);
    await admin.delete(`/schedules/${schedule.id}/`);

    const fake: FakeLlmServer = await startFakeLlmServer();
    try {
      for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
        assert.equal((await admin.post('/env-mgmt/', { name, value })).status, 200);
      await settingsReachWorkers();
      const llm = {
        nodes: [
          input(),
          n('ask', 'SingleLLMCallNode', {
            llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50 },
            user_message: 'say {{in.x}}',
          }),
          n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
        ],
        links: [l('in', 'ask'), l('ask', 'out')],
      };
      const spender = (await admin.post('/wf/', { name: 'firefox usage', definition: llm })).body;
      const ran = await admin.post(`/wf/${spender.id}/run/`, { initial_inputs: { in: { x: 'a' } } });
      assert.equal(ran.status, 200, ran.text);
      assert.equal(fake.requests.length, 1, ran.text);
    } finally {
      await fake.close();
    }
    await page.goto(`${origin}/console/usage`);
    await page.waitForSelector('.chart canvas');
    const today = new Date().toISOString().slice(0, 10);
    assert.match(await page.$eval(`tr[data-key="${today}"]`, (tr) => tr.textContent ?? ''), /^\d{4}-\d\d-\d\d\$/);
    assert.deepEqual(problems, []);
  });
});
