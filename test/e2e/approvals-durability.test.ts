// Reminders, escalations and the timeout are timers of the run's workflow: a worker lost between the
// pause and them loses none; the next worker acts on what fell due meanwhile.
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
/** The timeout of the on_timeout test: as far off, for the same reason. */
const TIMEOUT_S = 15;

describe('e2e: approval reminders, escalations and timeouts through a worker restart', function () {
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

  /** A run of in → gate (a HumanInterventionNode with `gate`) → after, started and PAUSED at the gate. */
  async function pausedRun(name: string, gate: Record<string, unknown>): Promise<string> {
    const definition = {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'Approve this?', ...gate }),
        n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'after')],
    };
    const wf = await engine.http.post('/wf/', { name, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'r' } } });
    await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED');
    return started.body.id as string;
  }

  const pauseOf = async (runId: string) => (await engine.http.get(`/wf/pause_history/${runId}/`)).body[0];

  /**
   * Kills the worker once the first link is recorded as sent: a worker killed between Slack's answer
   * and the activity's completion would send the link again when the activity is retried.
   */
  async function killWorkerAfterFirstLink(runId: string): Promise<number> {
    await eventually('the first link recorded as sent', async () =>
      (await pauseOf(runId))?.notifications?.some((d: { status: string }) => d.status === 'sent') ? true : undefined,
    );
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    return Date.now();
  }

  it('a worker killed after the first link: the reminder and escalation due while it was down arrive once from the next worker, and the escalated link decides', async () => {
    const runId = await pausedRun('approvals through a restart', {
      notify: [{ channel: 'slack', to: 'C-restart' }],
      remind_after_seconds: REMIND_S,
      escalate_after_seconds: ESCALATE_S,
      escalate_to: [{ channel: 'email', to: 'lead@example.test', from: 'spur@example.test' }],
      timeout_seconds: 3600,
    });
    const pausedBy = Date.now();
    await linksFor(fake, 'C-restart', 1);
    await killWorkerAfterFirstLink(runId);
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
    const done = await waitForRun(engine.http, runId, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED');
    const record = await pauseOf(runId);
    assert.equal(record.resume_user_id, 'email:lead@example.test');
    assert.deepEqual(
      receivedLinks(fake)
        .map((link) => link.to)
        .sort(),
      ['C-restart', 'C-restart', 'lead@example.test'],
      'each message was sent once',
    );
  });

  it('a worker killed after the pause: on_timeout acts once the next worker runs, recorded as system:timeout at the time it acted', async () => {
    const runId = await pausedRun('approval timeout through a restart', {
      notify: [{ channel: 'slack', to: 'C-timeout-restart' }],
      timeout_seconds: TIMEOUT_S,
      on_timeout: 'approve',
    });
    const pausedAt = Date.parse((await pauseOf(runId)).pause_time);
    const killedAt = await killWorkerAfterFirstLink(runId);
    assert.ok(killedAt - pausedAt < TIMEOUT_S * 1000, 'the worker was lost before the timeout was due');
    // Past the timeout, with no worker to act on it.
    await new Promise((r) => setTimeout(r, pausedAt + (TIMEOUT_S + 2) * 1000 - Date.now()));
    assert.equal((await engine.http.get(`/run/${runId}/status/`)).body.status, 'PAUSED');
    assert.deepEqual((await pauseOf(runId)).decisions, [], 'nothing decided while no worker ran');

    const restartedAt = Date.now();
    engine.worker = await startWorker(engine.api.env);
    const done = await waitForRun(engine.http, runId, isFinal, 90_000);
    assert.equal(done.status, 'COMPLETED');
    const record = await pauseOf(runId);
    assert.deepEqual([record.resume_action, record.resume_user_id], ['APPROVE', 'system:timeout']);
    assert.deepEqual(
      record.decisions.map((d: { user_id: string; action: string; channel: string }) => [
        d.user_id,
        d.action,
        d.channel,
      ]),
      [['system:timeout', 'APPROVE', 'timeout']],
    );
    const decidedAt = Date.parse(record.decisions[0].time);
    assert.ok(
      decidedAt >= pausedAt + TIMEOUT_S * 1000,
      `decided at +${decidedAt - pausedAt} ms, not before the timeout`,
    );
    // Temporal's clock and this one may differ by a little: a second of slack either side.
    assert.ok(decidedAt >= restartedAt - 1000, 'recorded when the next worker acted, not while none ran');
    assert.ok(decidedAt <= Date.now() + 1000, 'and not in the future');
  });
});
