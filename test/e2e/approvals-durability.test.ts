// Reminders and escalations are timers of the run's workflow: a worker lost between the pause and
// the reminder loses neither; the next worker sends what fell due meanwhile. (on_timeout acting
// when nobody answers is approvals.test.ts's: here the timeout is far off, so however long the next
// worker takes to start on a loaded host, the pause is still open when it does.)
import assert from 'node:assert/strict';
import { type SplitEngine, isFinal, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { input, l, n } from '../support/graphs';
import { PUBLIC_URL, connectMessaging, decideByLink, linksFor, receivedLinks } from '../support/approvals';
import { eventually } from '../support/python-runs';
import { startWorker } from '../support/worker';

/** Far enough after the pause that the first link is recorded as sent and the worker is gone, even on a loaded host. */
const REMIND_S = 15;
const ESCALATE_S = 16;

describe('e2e: approval reminders and escalations through a worker restart', function () {
  this.timeout(180_000);
  let engine: SplitEngine;
  let fake: FakeServices;
  before(async () => {
    engine = await startSplitEngine({ SPUR_PUBLIC_URL: PUBLIC_URL, SPUR_LOG_LEVEL: 'error' });
    fake = await startFakeServices();
    await connectMessaging(engine, fake);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('a worker killed after the first link: the reminder and escalation due while it was down arrive once from the next worker, and the escalated link decides', async () => {
    const definition = {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', {
          message: 'Approve this?',
          notify: [{ channel: 'slack', to: 'C-restart' }],
          remind_after_seconds: REMIND_S,
          escalate_after_seconds: ESCALATE_S,
          escalate_to: [{ channel: 'email', to: 'lead@example.test', from: 'spur@example.test' }],
          timeout_seconds: 3600,
        }),
        n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'after')],
    };
    const wf = await engine.http.post('/wf/', { name: 'approvals through a restart', definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'r' } } });
    await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED');
    const pausedBy = Date.now();
    await linksFor(fake, 'C-restart', 1);
    // Killed only once the delivery is recorded as sent: a worker killed between Slack's answer
    // and the activity's completion would send the link again when the activity is retried.
    await eventually('the first link recorded as sent', async () => {
      const pause = (await engine.http.get(`/wf/pause_history/${started.body.id}/`)).body[0];
      return pause?.notifications?.some((d: { status: string }) => d.status === 'sent') ? pause : undefined;
    });

    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    assert.ok(Date.now() - pausedBy < REMIND_S * 1000, 'the worker was lost before the reminder was due');
    // Past the reminder's and the escalation's times, with no worker to send them.
    await new Promise((r) => setTimeout(r, pausedBy + (ESCALATE_S + 2) * 1000 - Date.now()));
    const whileDown = receivedLinks(fake);
    assert.deepEqual(
      whileDown.map((link) => link.to),
      ['C-restart'],
      'nothing was sent while no worker ran',
    );

    engine.worker = await startWorker(engine.api.env);
    // A worker's start on a loaded host takes its time: the reminder comes once it runs.
    const [, reminder] = await linksFor(fake, 'C-restart', 2, undefined, 90_000);
    assert.match(reminder!.message, /Reminder/);
    const [escalation] = await linksFor(fake, 'lead@example.test', 1, undefined, 90_000);
    assert.match(escalation!.message.subject, /Escalated to you/);

    const decided = await decideByLink(engine, escalation!.link, 'APPROVE');
    assert.equal(decided.status, 200, decided.html);
    const done = await waitForRun(engine.http, started.body.id, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED');
    const record = (await engine.http.get(`/wf/pause_history/${started.body.id}/`)).body[0];
    assert.equal(record.resume_user_id, 'email:lead@example.test');
    assert.deepEqual(
      receivedLinks(fake)
        .map((link) => link.to)
        .sort(),
      ['C-restart', 'C-restart', 'lead@example.test'],
      'each message was sent once',
    );
  });
});
