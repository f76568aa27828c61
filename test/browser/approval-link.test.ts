// An approval link as its recipient uses it: opened in headless Chromium from what the fake Slack
// received, APPROVE pressed on Spur's page (its form, cookie and nonce as the browser sends them).
import assert from 'node:assert/strict';
import { isFinal, startEngine, waitForRun, type Engine } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { input, l, n } from '../support/graphs';
import { PUBLIC_URL, connectMessaging, linksFor, onApi } from '../support/approvals';
import { type TestBrowser, openBrowser } from '../support/browser';

describe('browser: an approval link opened in Chromium decides the pause', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeServices;
  let browser: TestBrowser;
  before(async () => {
    engine = await startEngine({ SPUR_PUBLIC_URL: PUBLIC_URL, SPUR_LOG_LEVEL: 'error' });
    fake = await startFakeServices();
    await connectMessaging(engine, fake);
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await engine?.close();
    await fake?.close();
  });

  it('shows the pause and, on APPROVE, resumes the run as the recipient; the used link then decides nothing', async () => {
    const definition = {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', {
          message: 'Ship the release?',
          notify: [{ channel: 'slack', to: 'C-browser' }],
        }),
        n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'after')],
    };
    const wf = await engine.http.post('/wf/', { name: 'approval in a browser', definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v1' } } });
    await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED');
    const [received] = await linksFor(fake, 'C-browser');
    const url = onApi(engine, received!.link);

    const { page } = browser;
    await page.goto(url);
    assert.equal(await page.locator('#pause-message').textContent(), 'Ship the release?');
    await page.getByRole('button', { name: 'APPROVE' }).click();
    await page.locator('#notice').waitFor();

    const done = await waitForRun(engine.http, started.body.id, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED');
    const [pause] = (await engine.http.get(`/wf/pause_history/${started.body.id}/`)).body;
    assert.deepEqual([pause.resume_action, pause.resume_user_id], ['APPROVE', 'slack:C-browser']);

    // The same link again: a page saying so, and no second decision.
    const again = await page.goto(url);
    assert.equal(again?.status(), 410);
    const history = (await engine.http.get(`/wf/pause_history/${started.body.id}/`)).body;
    assert.equal(history[0].decisions.length, 1);
    assert.deepEqual(browser.problems, []);
  });
});
