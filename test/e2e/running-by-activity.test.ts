// A slow node is shown RUNNING by its own activity, first thing, not by a save of the workflow's
// before it (docs/performance.md, "Slow nodes shown RUNNING by their activity"): the record and the
// event stream show it while its call is held, and the run's history has no save (a local activity)
// between the run's start and the call.
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import type { Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { closedRunHistory } from '../support/run-history';
import { openSse } from '../support/sse';
import { until } from '../support/exec-log';

/** in → ask → out, the call short (a local activity) or regular (heartbeats asked for). */
const oneCall = (config: Record<string, unknown>) => ({
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', {
      llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50 },
      user_message: 'say {{in.x}}',
      ...config,
    }),
    n('out', 'OutputNode', { output_map: { a: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
});

type Event = temporal.api.history.v1.IHistoryEvent;
/** The activity type of a local activity's marker (its data's `activity_type`). */
function localActivityType(e: Event): string {
  const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
  return data ? String((JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }).activity_type) : '';
}
const summaryOf = (e: Event) =>
  e.userMetadata?.summary?.data ? (JSON.parse(Buffer.from(e.userMetadata.summary.data).toString()) as string) : '';

describe('e2e: a slow node shown RUNNING by its own activity', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine({ SPUR_EVENT_STREAM_POLL_MS: '50' }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  for (const [kind, config, callEvent] of [
    ['a short call (local activity)', { timeout_seconds: 30 }, 'marker'],
    ['a regular call (heartbeats)', { timeout_seconds: 60, heartbeat_timeout_seconds: 20 }, 'activity'],
  ] as const) {
    it(`${kind}: RUNNING in the record and the stream while the call is held, with no save of its own before the call`, async () => {
      let release = () => undefined as void;
      fake.enqueue({ content: 'hello', heldUntil: new Promise<void>((resolve) => (release = resolve)) });
      const wf = (await engine.http.post('/wf/', { name: `running-${Math.random()}`, definition: oneCall(config) }))
        .body;
      const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'hi' } } });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const runId = started.body.id as string;
      const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);

      // Held at the provider: the record and the stream say the node runs.
      await until(
        'the call reaches the provider',
        () => fake.requests.length > 0 && !fake.requests.at(-1)?.answered,
        30_000,
      );
      let running: { status: string; tasks: Array<{ node_id: string; status: string; start_time: string | null }> } = {
        status: '',
        tasks: [],
      };
      await until(
        'the record shows the node RUNNING',
        async () => {
          running = (await engine.http.get(`/run/${runId}/`)).body;
          return running.tasks.some((t) => t.node_id === 'ask' && t.status === 'RUNNING');
        },
        30_000,
      );
      assert.equal(running.status, 'RUNNING');
      assert.ok(running.tasks.find((t) => t.node_id === 'ask')?.start_time, 'with its start time');
      await stream.waitFor((es) => es.some((e) => e.event === 'task.started' && e.data.node_id === 'ask'), 30_000);
      assert.ok(!stream.events.some((e) => e.event === 'task.completed' && e.data.node_id === 'ask'));
      release();
      assert.equal(await stream.ended, true);
      assert.equal((await engine.http.get(`/run/${runId}/`)).body.status, 'COMPLETED');

      // No save (a local activity of its own) between the run's start and the call.
      const events = (await closedRunHistory(engine, runId)).events ?? [];
      const call = events.findIndex((e) =>
        callEvent === 'marker'
          ? e.markerRecordedEventAttributes && summaryOf(e) === 'ask (ask)'
          : e.activityTaskScheduledEventAttributes && summaryOf(e) === 'ask (ask)',
      );
      assert.ok(call > 0, 'the call is in the history');
      const before = events.slice(0, call).map(localActivityType).filter(Boolean);
      assert.ok(!before.includes('saveProgress'), `local activities before the call: ${before.join(', ')}`);
    });
  }
});
