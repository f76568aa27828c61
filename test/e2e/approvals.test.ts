import assert from 'node:assert/strict';
import { approvalTokens } from '../../src/approvals/approval-token';
import { isFinal, startEngine, waitForRun, type Engine } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { input, l, n } from '../support/graphs';
import { CREDENTIALS } from '../support/integration-runs';
import {
  PUBLIC_URL,
  decideByLink,
  linksFor,
  onApi,
  openLink,
  pressButton,
  receivedLinks,
  connectMessaging,
} from '../support/approvals';
import { eventually } from '../support/python-runs';
import { callbackSignature } from '../../src/callbacks/callback-post';

const WEBHOOK_SECRET = 'approval-webhook-secret-0123456789';
const XSS = `<script id="xss">window.__xss = 1</script><img src=x onerror="window.__xss=2">`;

/** in → gate (human, with `config`) → after. */
function gated(config: Record<string, unknown>) {
  return {
    nodes: [
      input(),
      n('gate', 'HumanInterventionNode', { message: 'Approve this?', ...config }),
      n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
    ],
    links: [l('in', 'gate'), l('gate', 'after')],
  };
}

const slack = (to: string, extra: Record<string, unknown> = {}) => ({ channel: 'slack', to, ...extra });
const email = (to: string) => ({ channel: 'email', to, from: 'spur@example.test' });

describe('e2e: approvals that reach people (links, notifications, reminders, quorum)', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeServices;
  let hooks: CallbackReceiver;
  before(async () => {
    engine = await startEngine({
      SPUR_PUBLIC_URL: PUBLIC_URL,
      SPUR_APPROVAL_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SPUR_LOG_LEVEL: 'error',
    });
    fake = await startFakeServices();
    hooks = await startCallbackReceiver();
    await connectMessaging(engine, fake);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
    await hooks?.close();
  });

  async function pausedRun(config: Record<string, unknown>, x = 'v') {
    const wf = await engine.http.post('/wf/', { name: `approvals-${Math.random()}`, definition: gated(config) });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const res = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x } } });
    const run = await waitForRun(engine.http, res.body.id, (r) => r.status === 'PAUSED');
    return run as { id: string; status: string };
  }
  const history = async (runId: string) => (await engine.http.get(`/wf/pause_history/${runId}/`)).body[0];
  /** The run's `pause.notification` events, as its stream (GET /run/{id}/events/) sends them. */
  const notificationEvents = async (runId: string): Promise<any[]> =>
    (await engine.api.services.runRecords.events.after(runId, 0, 1000))
      .filter((ev) => ev.event === 'pause.notification')
      .map((ev) => JSON.parse(ev.data));
  const statusOf = async (runId: string) => (await engine.http.get(`/run/${runId}/status/`)).body.status as string;

  it('a paused run sends each recipient their own link (Slack, e-mail, signed webhook); the link on the page approves it as that recipient, through that channel', async () => {
    const run = await pausedRun({
      notify: [slack('C-ops'), email('ada@example.test'), { channel: 'webhook', to: `${hooks.url}/approvals` }],
    });
    const [s] = await linksFor(fake, 'C-ops');
    const [e] = await linksFor(fake, 'ada@example.test');
    const [w] = await linksFor(fake, '/approvals', 1, hooks);
    for (const link of [s!, e!, w!]) assert.ok(link.link.startsWith(`${PUBLIC_URL}/approve/`), link.link);
    assert.equal(new Set([s!.link, e!.link, w!.link]).size, 3, 'one link per recipient');
    // Slack got the bot token, e-mail the provider's key; the webhook is signed like a callback.
    const slackCall = fake.to('slack').at(-1)!;
    assert.equal(slackCall.headers.authorization, `Bearer ${CREDENTIALS.SLACK_BOT_TOKEN}`);
    assert.equal(fake.to('resend').at(-1)!.body.from, 'spur@example.test');
    const hook = hooks.received.find((h) => h.path === '/approvals')!;
    assert.equal(hook.headers['x-spur-signature'], callbackSignature(WEBHOOK_SECRET, hook.raw));
    assert.equal(hook.headers['x-spur-event'], 'pause.approval_requested');
    assert.equal(hook.body.run_id, run.id);
    // Delivery status on the pause, and in the run's events.
    const sent = await eventually('deliveries recorded', async () => {
      const p = await history(run.id);
      return p.notifications.filter((d: any) => d.status === 'sent').length === 3 ? p.notifications : undefined;
    });
    assert.deepEqual(sent.map((d: any) => d.channel).sort(), ['email', 'slack', 'webhook']);
    const notices = await eventually('three pause.notification events', async () => {
      const found = (await notificationEvents(run.id)).filter((d) => d.status === 'sent');
      return found.length === 3 ? found : undefined;
    });
    assert.deepEqual(notices.map((d) => d.channel).sort(), ['email', 'slack', 'webhook']);

    const res = await decideByLink(engine, e!.link, 'APPROVE', { comments: 'looks fine' });
    assert.equal(res.status, 200, res.html);
    assert.match(res.html, /Your APPROVE is recorded/);
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'COMPLETED');
    const record = await history(run.id);
    assert.equal(record.resume_user_id, 'email:ada@example.test');
    assert.equal(record.resume_action, 'APPROVE');
    assert.equal(record.comments, 'looks fine');
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [['email:ada@example.test', 'APPROVE', 'email']],
    );

    // The same link again, another recipient's link after the decision: a page saying so, nothing decided.
    const again = await decideByLink(engine, e!.link, 'DECLINE');
    assert.equal(again.status, 410);
    const other = await openLink(onApi(engine, s!.link));
    assert.equal(other.status, 410);
    assert.equal((await history(run.id)).decisions.length, 1);
    assert.equal(await statusOf(run.id), 'COMPLETED');
  });

  it('a tampered link (one character changed), an expired one and one for another run decide nothing (403, 410)', async () => {
    const run = await pausedRun({ notify: [slack('C-tamper')] });
    const [s] = await linksFor(fake, 'C-tamper');
    const url = onApi(engine, s!.link);
    const token = url.slice(url.lastIndexOf('/') + 1);
    const dot = token.indexOf('.');
    for (const i of [3, dot + 5, token.length - 1]) {
      const c = token[i] === 'A' ? 'B' : 'A';
      const tampered = `${url.slice(0, url.lastIndexOf('/') + 1)}${token.slice(0, i)}${c}${token.slice(i + 1)}`;
      const page = await openLink(tampered);
      assert.equal(page.status, 403, `character ${i}`);
      // Even with a valid page's nonce and cookie, a POST on the tampered token decides nothing.
      const good = await openLink(url);
      assert.equal((await pressButton(tampered, good, 'APPROVE')).status, 403);
    }
    const tokens = approvalTokens(Buffer.from(engine.api.env.SPUR_SECRET_KEY!, 'base64'));
    const claims = { runId: run.id, pauseId: `${run.id}:gate:1`, userId: 'slack:C-tamper', channel: 'slack' as const };
    const expired = tokens.mint({ ...claims, expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const origin = new URL(engine.api.baseUrl).origin;
    const page = await openLink(`${origin}/approve/${expired}`);
    assert.equal(page.status, 410);
    assert.match(page.html, /expired/);
    const good = await openLink(url);
    assert.equal((await pressButton(`${origin}/approve/${expired}`, good, 'APPROVE')).status, 410);
    // Signed with another key (another installation's link): invalid.
    const foreign = approvalTokens(Buffer.alloc(32, 7)).mint({ ...claims, expiresAt: Date.now() / 1000 + 600 });
    assert.equal((await openLink(`${origin}/approve/${foreign}`)).status, 403);
    assert.equal(await statusOf(run.id), 'PAUSED');
    assert.deepEqual((await history(run.id)).decisions, []);
  });

  it('the page escapes the pause message and input data, sends its security headers, and a POST needs its nonce and its own origin', async () => {
    const run = await pausedRun({ message: `Check ${XSS}`, notify: [slack('C-xss')] }, XSS);
    const [s] = await linksFor(fake, 'C-xss');
    const url = onApi(engine, s!.link);
    const page = await openLink(url);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes('<script id="xss">'), 'the message is not markup');
    assert.ok(!page.html.includes('<img src=x'), 'the input is not markup');
    assert.ok(page.html.includes('&#60;script id=&#34;xss&#34;&#62;'), 'shown as text');
    assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    assert.match(page.cookie!, /^spur_approval_nonce=/);
    // Nothing of the api's or of other runs: no key, no other run id.
    assert.ok(!page.html.includes(engine.api.env.SPUR_SECRET_KEY!));
    // A POST without the page's cookie, with another nonce, from another origin, as text/plain: nothing decided.
    assert.equal((await pressButton(url, { cookie: null, nonce: page.nonce }, 'APPROVE')).status, 403);
    assert.equal((await pressButton(url, { cookie: page.cookie, nonce: 'x'.repeat(43) }, 'APPROVE')).status, 403);
    assert.equal((await pressButton(url, page, 'APPROVE', {}, { origin: 'https://evil.example' })).status, 403);
    const plain = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', cookie: page.cookie! },
      body: `nonce=${page.nonce}&action=APPROVE`,
    });
    assert.equal(plain.status, 415);
    // OVERRIDE is not offered unless the node allows it.
    assert.equal((await pressButton(url, page, 'OVERRIDE', { inputs: '{"x": 1}' })).status, 422);
    assert.equal(await statusOf(run.id), 'PAUSED');
    assert.deepEqual((await history(run.id)).decisions, []);
  });

  it('2-of-3 quorum: the run resumes after the second approval and not before; each decision is in the pause history', async () => {
    const run = await pausedRun({
      notify: [slack('C-q1'), slack('C-q2'), email('q3@example.test')],
      approvals_required: 2,
    });
    const [a] = await linksFor(fake, 'C-q1');
    const [b] = await linksFor(fake, 'C-q2');
    await linksFor(fake, 'q3@example.test');
    assert.equal((await decideByLink(engine, a!.link, 'APPROVE')).status, 200);
    const between = await history(run.id);
    assert.deepEqual(
      between.decisions.map((d: any) => d.user_id),
      ['slack:C-q1'],
    );
    assert.equal(between.resume_time, null);
    assert.equal(await statusOf(run.id), 'PAUSED');
    // The same person twice counts once: refused.
    assert.equal((await decideByLink(engine, a!.link, 'APPROVE')).status, 410);
    const api = await engine.http.post(`/wf/process_pause_action/${run.id}/`, {
      action: 'APPROVE',
      user_id: 'slack:C-q1',
      inputs: {},
    });
    assert.equal(api.status, 400, JSON.stringify(api.body));
    assert.equal(await statusOf(run.id), 'PAUSED');
    assert.equal((await decideByLink(engine, b!.link, 'APPROVE')).status, 200);
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'COMPLETED');
    const record = await history(run.id);
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [
        ['slack:C-q1', 'APPROVE', 'slack'],
        ['slack:C-q2', 'APPROVE', 'slack'],
      ],
    );
    assert.equal(record.resume_user_id, 'slack:C-q2');
  });

  it('a quorum is declined by one DECLINE (decline_requires 1)', async () => {
    const run = await pausedRun({ notify: [slack('C-d1'), slack('C-d2')], approvals_required: 2 });
    const [a] = await linksFor(fake, 'C-d1');
    const r = await decideByLink(engine, a!.link, 'DECLINE');
    assert.equal(r.status, 200);
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'CANCELED');
  });

  it('a failed delivery shows on the pause and in the run events, and does not block the run', async () => {
    const run = await pausedRun({ notify: [slack('C-missing'), slack('C-fine')] });
    await linksFor(fake, 'C-fine');
    const failed = await eventually('the failed delivery', async () => {
      const p = await history(run.id);
      // C-missing's delivery: the fake Slack answers channel_not_found for it, which no retry mends.
      return p.notifications.find((d: any) => d.status === 'failed' && d.to === 'C-missing');
    });
    assert.equal(failed.to, 'C-missing');
    assert.match(failed.error, /channel_not_found/);
    const notice = await eventually('the failed delivery event', async () =>
      (await notificationEvents(run.id)).find((d) => d.status === 'failed'),
    );
    assert.equal(notice.to, 'C-missing');
    assert.match(notice.error, /channel_not_found/);
    const res = await engine.http.post(`/wf/process_pause_action/${run.id}/`, {
      action: 'APPROVE',
      user_id: 'inbox-user',
      inputs: {},
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal((await waitForRun(engine.http, run.id, isFinal)).status, 'COMPLETED');
  });

  it('a reminder and an escalation arrive at their times; nobody answers: on_timeout acts', async () => {
    const started = Date.now();
    const run = await pausedRun({
      notify: [slack('C-late')],
      remind_after_seconds: 2,
      escalate_after_seconds: 4,
      escalate_to: [email('boss@example.test')],
      timeout_seconds: 7,
      on_timeout: 'approve',
    });
    const [first, reminder] = await linksFor(fake, 'C-late', 2);
    assert.match(first!.message, /waiting for your decision/);
    assert.match(reminder!.message, /Reminder/);
    const [escalation] = await linksFor(fake, 'boss@example.test');
    assert.match(escalation!.message.subject, /Escalated to you/);
    assert.ok(Date.now() - started >= 4000, 'not before its time');
    const done = await waitForRun(engine.http, run.id, isFinal, 30_000);
    assert.equal(done.status, 'COMPLETED');
    const record = await history(run.id);
    assert.equal(record.resume_user_id, 'system:timeout');
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.channel]),
      [['system:timeout', 'timeout']],
    );
  });

  it('on_timeout: fail fails the node and the run', async () => {
    const run = await pausedRun({ timeout_seconds: 1, on_timeout: 'fail' });
    const done = await waitForRun(engine.http, run.id, isFinal, 30_000);
    assert.equal(done.status, 'FAILED');
    assert.match((await engine.http.get(`/run/${run.id}/`)).body.message ?? '', /on_timeout: fail/);
  });

  it('refuses approval settings that cannot work (422 naming the field)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ notify: [{ channel: 'pager', to: 'x' }] }, 'notify'],
      [{ notify: [{ channel: 'email', to: 'not-an-address', from: 'a@b.c' }] }, 'notify'],
      [{ remind_after_seconds: 5 }, 'remind_after_seconds'],
      [{ notify: [slack('C1')], approvals_required: 2 }, 'approvals_required'],
      [{ on_timeout: 'fail' }, 'on_timeout'],
    ];
    for (const [config, field] of cases) {
      const res = await engine.http.post('/wf/', { name: `bad-${Math.random()}`, definition: gated(config) });
      assert.equal(res.status, 422, JSON.stringify(config));
      assert.ok(
        res.body.detail.some((d: any) => d.loc.includes(field)),
        `${field}: ${JSON.stringify(res.body.detail)}`,
      );
    }
    assert.equal(receivedLinks(fake).filter((l) => l.to === 'C1').length, 0);
  });
});
