import assert from 'node:assert/strict';
import { approvalTokens } from '../../src/approvals/approval-token';
import { isFinal, startEngine, waitForRun, type Engine } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { CREDENTIALS } from '../support/integration-runs';
import {
  PUBLIC_URL,
  decideByLink,
  gated,
  linkClaims,
  linksFor,
  onApi,
  openLink,
  pressButton,
  receivedLinks,
  connectMessaging,
  type ReceivedLink,
} from '../support/approvals';
import { eventually } from '../support/python-runs';
import { type SseEvent, openSse } from '../support/sse';
import { callbackSignature } from '../../src/callbacks/callback-post';

const WEBHOOK_SECRET = 'approval-webhook-secret-0123456789';
/** The deliveries' first retry (SPUR_CALLBACK_RETRY_FIRST_SECONDS), well under the retry test's Retry-After. */
const FIRST_RETRY_S = 0.2;
const XSS = `<script id="xss">window.__xss = 1</script><img src=x onerror="window.__xss=2">`;

/** Each decision's `time` is an ISO date, in order, between its pause's time and now. */
function assertDecisionTimes(record: { pause_time: string; decisions: { time: string }[] }): void {
  let earliest = Date.parse(record.pause_time);
  for (const d of record.decisions) {
    assert.match(d.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const t = Date.parse(d.time);
    assert.ok(t >= earliest && t <= Date.now(), `${d.time} after ${record.pause_time} and before now`);
    earliest = t;
  }
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
      // Deliveries retry soon (the retry test), so a Retry-After longer than this shows as such.
      SPUR_CALLBACK_RETRY_FIRST_SECONDS: String(FIRST_RETRY_S),
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
    const name = `approvals-${Math.random()}`;
    const wf = await engine.http.post('/wf/', { name, definition: gated(config) });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const res = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x } } });
    const run = await waitForRun(engine.http, res.body.id, (r) => r.status === 'PAUSED');
    return { ...(run as { id: string; status: string }), workflowName: name };
  }
  const history = async (runId: string) => (await engine.http.get(`/wf/pause_history/${runId}/`)).body[0];
  /** The run's `pause.notification` events as its stream (GET /run/{id}/events/) sends them, once `enough` holds. */
  async function notificationEvents(runId: string, enough: (notices: any[]) => boolean): Promise<any[]> {
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    try {
      assert.equal(stream.status, 200, stream.body());
      const notices = (events: SseEvent[]) => events.filter((e) => e.event === 'pause.notification').map((e) => e.data);
      return notices(await stream.waitFor((events) => enough(notices(events)), 30_000));
    } finally {
      stream.close();
    }
  }
  const statusOf = async (runId: string) => (await engine.http.get(`/run/${runId}/status/`)).body.status as string;
  /** Approves the run's pause through the inbox's API (not a link) and waits for it to complete. */
  async function approveInInbox(runId: string): Promise<void> {
    const res = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'inbox-user',
      inputs: {},
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal((await waitForRun(engine.http, runId, isFinal)).status, 'COMPLETED');
  }

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
    const sentNotice = (d: any) => d.status === 'sent';
    const notices = (await notificationEvents(run.id, (all) => all.filter(sentNotice).length >= 3)).filter(sentNotice);
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

  it("a tampered link (one character changed) or one of another key (403), an expired one, one naming another run's pause or a pause that does not exist (410) decide nothing", async () => {
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

    // Signed with the real key, unexpired, but binding nothing that exists: a second paused run's id
    // (and its recipient) with the first run's pause; the first run with a pause it never had.
    const second = await pausedRun({ notify: [slack('C-tamper-2')] });
    await linksFor(fake, 'C-tamper-2');
    const live = Math.floor(Date.now() / 1000) + 600;
    const firstPause = linkClaims(s!.link).p;
    const crossed = tokens.mint({
      ...claims,
      runId: second.id,
      pauseId: firstPause,
      userId: 'slack:C-tamper-2',
      expiresAt: live,
    });
    const missing = tokens.mint({ ...claims, pauseId: `${firstPause}-none`, expiresAt: live });
    for (const [what, token] of [
      ['crossed', crossed],
      ['missing', missing],
    ] as const) {
      const link = `${origin}/approve/${token}`;
      const opened = await openLink(link);
      assert.equal(opened.status, 410, `${what}: ${opened.html}`);
      assert.match(opened.html, /Nothing was decided|no longer exists/, what);
      assert.equal(opened.nonce, null, `${what}: no form`);
      assert.equal((await pressButton(link, good, 'APPROVE')).status, 410, what);
    }
    for (const id of [run.id, second.id]) {
      assert.equal(await statusOf(id), 'PAUSED');
      assert.deepEqual((await history(id)).decisions, []);
    }
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

  it('with allow_override the page shows the workflow, node, pause message, input data and a comments field; invalid JSON decides nothing (422); OVERRIDE with JSON completes the run with those inputs', async () => {
    const run = await pausedRun(
      { message: 'Check the amount', notify: [slack('C-override')], allow_override: true },
      'as-entered',
    );
    const [s] = await linksFor(fake, 'C-override');
    const url = onApi(engine, s!.link);
    const page = await openLink(url);
    assert.equal(page.status, 200, page.html);
    assert.ok(page.html.includes(`<h1>Decision needed: ${run.workflowName}</h1>`), 'the workflow name');
    assert.match(page.html, /<dt>Node<\/dt><dd>gate \(gate\)<\/dd>/);
    assert.match(page.html, /<p class="message" id="pause-message">Check the amount<\/p>/);
    assert.match(page.html, /<pre id="input-data">[^<]*&#34;x&#34;: &#34;as-entered&#34;[^<]*<\/pre>/);
    assert.match(page.html, /<textarea id="comments" name="comments"/);
    assert.match(page.html, /<textarea id="inputs" name="inputs"/);
    assert.match(page.html, /<button [^>]*value="OVERRIDE">OVERRIDE<\/button>/);

    for (const [inputs, why] of [
      ['{"in": {"x": ', /not valid JSON/],
      ['["not", "an object"]', /must be a JSON object/],
    ] as const) {
      const refused = await pressButton(url, page, 'OVERRIDE', { inputs });
      assert.equal(refused.status, 422, inputs);
      assert.match(refused.html, why);
    }
    assert.equal(await statusOf(run.id), 'PAUSED');
    assert.deepEqual((await history(run.id)).decisions, []);

    const res = await pressButton(url, page, 'OVERRIDE', {
      inputs: JSON.stringify({ in: { x: 'overridden' } }),
      comments: 'amount corrected',
    });
    assert.equal(res.status, 200, res.html);
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual((done as any).outputs.after, { x: 'overridden' });
    const record = await history(run.id);
    assert.deepEqual(
      [record.resume_action, record.resume_user_id, record.comments],
      ['OVERRIDE', 'slack:C-override', 'amount corrected'],
    );
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [['slack:C-override', 'OVERRIDE', 'slack']],
    );
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

  it('decline_requires 2 of 3: one DECLINE leaves the run PAUSED, the second declines it; each decision has its time', async () => {
    const run = await pausedRun({
      notify: [slack('C-m1'), slack('C-m2'), slack('C-m3')],
      approvals_required: 2,
      decline_requires: 2,
    });
    const [a] = await linksFor(fake, 'C-m1');
    const [b] = await linksFor(fake, 'C-m2');
    assert.equal((await decideByLink(engine, a!.link, 'DECLINE')).status, 200);
    const between = await history(run.id);
    assert.deepEqual(
      between.decisions.map((d: any) => [d.user_id, d.action]),
      [['slack:C-m1', 'DECLINE']],
    );
    assert.equal(between.resume_time, null);
    assert.equal(await statusOf(run.id), 'PAUSED');
    assert.equal((await decideByLink(engine, b!.link, 'DECLINE', { comments: 'no' })).status, 200);
    const done = await waitForRun(engine.http, run.id, isFinal);
    assert.equal(done.status, 'CANCELED');
    const record = await history(run.id);
    assert.deepEqual([record.resume_action, record.resume_user_id, record.comments], ['DECLINE', 'slack:C-m2', 'no']);
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [
        ['slack:C-m1', 'DECLINE', 'slack'],
        ['slack:C-m2', 'DECLINE', 'slack'],
      ],
    );
    assertDecisionTimes(record);
  });

  it('Slack and e-mail messages quote the pause message cut at 1000 characters (a character never split); Slack gets & < > escaped', async () => {
    const head = 'Pay <!channel> & see <https://evil.example|the invoice> ';
    // Character 1000 is an emoji (two UTF-16 units): a cut must keep it whole or drop it, never halve it.
    const kept = `${head}${'x'.repeat(999 - [...head].length)}😀`;
    const message = `${kept}${'y'.repeat(500)}`;
    const run = await pausedRun({ message, notify: [slack('C-cut'), email('cut@example.test')] });
    const [s] = await linksFor(fake, 'C-cut');
    const [e] = await linksFor(fake, 'cut@example.test');
    assert.equal([...kept].length, 1000);

    const slackText: string = s!.message;
    assert.ok(!slackText.includes('<!channel>'), 'no live mention');
    assert.ok(!slackText.includes('<https://evil.example'), 'no disguised link');
    const quoted = slackText.split('\n').find((line) => line.startsWith('>'));
    const unescape = (t: string) => t.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    assert.equal(
      quoted,
      `>${kept.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}…`,
      'escaped as Slack asks, cut after character 1000',
    );
    assert.equal(unescape(quoted!.slice(1)), `${kept}…`);
    // Links carry random tokens, which may hold "yy" themselves: the cut is looked for in the rest.
    const withoutLinks = (t: string) => t.replace(/https?:\/\/[^\s|>]+/g, '');
    assert.ok(!withoutLinks(slackText).includes('yy'), 'nothing after the cut');

    const mailText: string = e!.message.text;
    assert.ok(mailText.includes(`\n${kept}…\n`), 'the e-mail quotes the same 1000 characters, unescaped');
    assert.ok(!withoutLinks(mailText).includes('yy'), 'nothing after the cut');
    assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(slackText + mailText), 'no half of a character');
    assert.equal((await history(run.id)).pause_message, message, 'the pause keeps its whole message');
  });

  it('two concurrent POSTs of one link decide once: one answers 200, the other 410, and the pause records one decision', async () => {
    // A 2-of-2 quorum: were the link counted twice, its one recipient would resume the run alone.
    const run = await pausedRun({ notify: [slack('C-twice'), slack('C-other')], approvals_required: 2 });
    const [link] = await linksFor(fake, 'C-twice');
    const url = onApi(engine, link!.link);
    const page = await openLink(url);
    assert.equal(page.status, 200, page.html);
    const answers = await Promise.all([pressButton(url, page, 'APPROVE'), pressButton(url, page, 'APPROVE')]);
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 410],
      answers
        .map((a) =>
          a.html
            .replace(/<style>[\s\S]*?<\/style>/, '')
            .replace(/<[^>]+>/g, ' ')
            .replace(/\s+/g, ' '),
        )
        .join(' | '),
    );
    const record = await history(run.id);
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [['slack:C-twice', 'APPROVE', 'slack']],
    );
    assert.equal(await statusOf(run.id), 'PAUSED', 'one approval of two: still waiting');
  });

  it('a run that ends does not cancel its deliveries: one being retried then reads skipped and sends nothing more', async () => {
    const path = '/approvals/after-the-end';
    const to = `${hooks.url}${path}`;
    // The first try is held until the run has ended, then answered 503: the retry comes after the end.
    const release = hooks.hold(path);
    hooks.script(path, 503);
    const run = await pausedRun({ notify: [{ channel: 'webhook', to }] });
    await hooks.waitFor(path, 1);
    await approveInInbox(run.id);
    release();
    const delivery = await eventually('the delivery recorded as skipped', async () =>
      (await history(run.id)).notifications.find((d: any) => d.to === to && d.status === 'skipped'),
    );
    assert.equal(delivery.attempts, 1, 'the held try, answered 503');
    assert.equal(hooks.received.filter((h) => h.path === path).length, 1, 'nothing sent after the decision');
  });

  it('on_timeout: decline declines the run as system:timeout once the timeout has passed', async () => {
    const run = await pausedRun({ notify: [slack('C-timeout-decline')], timeout_seconds: 2, on_timeout: 'decline' });
    const done = await waitForRun(engine.http, run.id, isFinal, 30_000);
    assert.equal(done.status, 'CANCELED');
    const record = await history(run.id);
    assert.deepEqual([record.resume_action, record.resume_user_id], ['DECLINE', 'system:timeout']);
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.action, d.channel]),
      [['system:timeout', 'DECLINE', 'timeout']],
    );
    assertDecisionTimes(record);
    assert.ok(Date.parse(record.decisions[0].time) - Date.parse(record.pause_time) >= 2000, 'not before the timeout');
  });

  it('a delivery answered 503, then 429 with Retry-After, is retried (honouring Retry-After) until Slack takes it; the pause shows it sent after 3 attempts', async () => {
    // Temporal starts a retry a second or so after the failure however short the backoff: a
    // Retry-After of 3 s is told apart from the backoff (0.2 s, then 0.4 s) only by its length.
    const RETRY_AFTER_S = 3;
    fake.failNext(
      'slack',
      /chat\.postMessage/,
      { status: 503, json: { ok: false, error: 'service_unavailable' } },
      { status: 429, json: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': String(RETRY_AFTER_S) } },
    );
    const run = await pausedRun({ notify: [slack('C-retry')] });
    const [link] = await linksFor(fake, 'C-retry');
    const tries = fake.to('slack', 'POST', /chat\.postMessage/).filter((r) => r.body?.channel === 'C-retry');
    assert.deepEqual(
      tries.map((r) => r.status),
      [503, 429, 200],
    );
    assert.equal(link!.at, tries[2]!.at, 'the link is the one Slack took');
    const waited = tries[2]!.at - tries[1]!.at;
    assert.ok(
      waited >= RETRY_AFTER_S * 1000 - 500,
      `the third try waited for Retry-After, not the backoff: ${waited} ms`,
    );
    const delivery = await eventually('the delivery recorded as sent', async () =>
      (await history(run.id)).notifications.find((d: any) => d.to === 'C-retry' && d.status === 'sent'),
    );
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.error, null);
    assert.equal(await statusOf(run.id), 'PAUSED');
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
    const failedNotice = (d: any) => d.status === 'failed';
    const notice = (await notificationEvents(run.id, (all) => all.some(failedNotice))).find(failedNotice);
    assert.equal(notice.to, 'C-missing');
    assert.match(notice.error, /channel_not_found/);
    await approveInInbox(run.id);
  });

  it('a reminder and an escalation arrive at their times after the pause, before its timeout; nobody answers: on_timeout acts', async () => {
    const [REMIND_MS, ESCALATE_MS, TIMEOUT_MS] = [3000, 6000, 15_000];
    /** How late a message may come after its time: generous, the host is shared and slow. */
    const LATE_MS = 6000;
    const run = await pausedRun({
      notify: [slack('C-late')],
      remind_after_seconds: REMIND_MS / 1000,
      escalate_after_seconds: ESCALATE_MS / 1000,
      escalate_to: [email('boss@example.test')],
      timeout_seconds: TIMEOUT_MS / 1000,
      on_timeout: 'approve',
    });
    const pausedAt = Date.parse((await history(run.id)).pause_time);
    const [first, reminder] = await linksFor(fake, 'C-late', 2);
    assert.match(first!.message, /waiting for your decision/);
    assert.match(reminder!.message, /Reminder/);
    const [escalation] = await linksFor(fake, 'boss@example.test');
    assert.match(escalation!.message.subject, /Escalated to you/);
    const since = (link: ReceivedLink) => link.at - pausedAt;
    assert.ok(since(first!) >= 0 && first!.at < reminder!.at, `first link at +${since(first!)} ms`);
    for (const [what, link, due] of [
      ['reminder', reminder!, REMIND_MS],
      ['escalation', escalation!, ESCALATE_MS],
    ] as const) {
      assert.ok(since(link) >= due, `${what} at +${since(link)} ms, not before +${due} ms`);
      assert.ok(since(link) < Math.min(due + LATE_MS, TIMEOUT_MS), `${what} at +${since(link)} ms, in time`);
    }
    const done = await waitForRun(engine.http, run.id, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED');
    const record = await history(run.id);
    assert.equal(record.resume_user_id, 'system:timeout');
    assert.deepEqual(
      record.decisions.map((d: any) => [d.user_id, d.channel]),
      [['system:timeout', 'timeout']],
    );
    assertDecisionTimes(record);
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
    // A field a recipient does not have is refused (the recipient's loc, the message naming the
    // field), not ignored: nothing signs per recipient, so a `secret` there would protect nothing.
    const unknown: [Record<string, unknown>, string][] = [
      [{ notify: [{ channel: 'webhook', to: 'https://hooks.example.test/a', secret: 'per-recipient' }] }, 'secret'],
      [{ notify: [slack('C1', { thread: '1' })] }, 'thread'],
    ];
    for (const [config, field] of unknown) {
      const res = await engine.http.post('/wf/', { name: `bad-${Math.random()}`, definition: gated(config) });
      assert.equal(res.status, 422, JSON.stringify(config));
      const [detail] = res.body.detail as { loc: unknown[]; msg: string }[];
      assert.deepEqual(detail?.loc.slice(-2), ['notify', 0], JSON.stringify(detail));
      assert.match(detail?.msg ?? '', new RegExp(`Unrecognized key: "${field}"`));
    }
    assert.equal(receivedLinks(fake).filter((l) => l.to === 'C1').length, 0);
  });
});
