// An approval link outlives neither its lifetime (SPUR_APPROVAL_LINK_HOURS, here a few seconds)
// nor anything it was for: past it, the link's page and its POST say so and decide nothing.
import assert from 'node:assert/strict';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { input, l, n } from '../support/graphs';
import { PUBLIC_URL, connectMessaging, linkClaims, linksFor, onApi, openLink, pressButton } from '../support/approvals';

/** 7.2 s: long enough to open the page once before it expires on a slow host, short enough to wait out. */
const LINK_HOURS = 0.002;
const LINK_MS = LINK_HOURS * 3_600_000;

describe('e2e: an approval link past its configured lifetime', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeServices;
  before(async () => {
    engine = await startEngine({
      SPUR_PUBLIC_URL: PUBLIC_URL,
      SPUR_APPROVAL_LINK_HOURS: String(LINK_HOURS),
      SPUR_LOG_LEVEL: 'error',
    });
    fake = await startFakeServices();
    await connectMessaging(engine, fake);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('expires SPUR_APPROVAL_LINK_HOURS after it was sent: then GET and POST answer 410 "expired" and the run stays PAUSED, undecided', async () => {
    // No timeout on the pause: the lifetime alone ends the link.
    const definition = {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'Approve?', notify: [{ channel: 'slack', to: 'C-expiry' }] }),
        n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'after')],
    };
    const wf = await engine.http.post('/wf/', { name: 'approval link expiry', definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } });
    const runId = started.body.id as string;
    await waitForRun(engine.http, runId, (r) => r.status === 'PAUSED');
    const [received] = await linksFor(fake, 'C-expiry');
    const url = onApi(engine, received!.link);
    const expiresMs = linkClaims(received!.link).e * 1000;
    // The lifetime configured, counted from the sending (rounded up to a second), not the default week.
    assert.ok(expiresMs - received!.at <= LINK_MS + 1000, `expires ${expiresMs - received!.at} ms after sending`);

    // Before it expires the link works: its page, whose form and cookie the POST below carries.
    const fresh = await openLink(url);
    assert.equal(fresh.status, 200, `the link worked at first (${expiresMs - Date.now()} ms left)`);

    await new Promise((r) => setTimeout(r, Math.max(0, expiresMs + 1000 - Date.now())));
    const page = await openLink(url);
    assert.equal(page.status, 410);
    assert.match(page.html, /This link has expired/);
    const posted = await pressButton(url, fresh, 'APPROVE');
    assert.equal(posted.status, 410);
    assert.match(posted.html, /This link has expired/);

    assert.equal((await engine.http.get(`/run/${runId}/status/`)).body.status, 'PAUSED');
    const [pause] = (await engine.http.get(`/wf/pause_history/${runId}/`)).body;
    assert.deepEqual([pause.decisions, pause.resume_time], [[], null]);
  });
});
