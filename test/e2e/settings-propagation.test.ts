// Workers keep provider settings, prices, budgets and limits in memory (src/db/settings-cache.ts);
// a change made through the API must reach every worker's calls within SETTINGS_CHECK_MS. Two
// worker processes (the api is a third process's worth of memory: it answers, it calls nothing)
// are both warmed with the old value, the setting changes, and every run that starts once the
// bound has passed must show the new value, on both workers.
import assert from 'node:assert/strict';
import os from 'node:os';
import { slotGrantedSignal } from '../../src/contracts/limit-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { SETTINGS_CHECK_MS } from '../../src/db/settings-cache';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { oneLlmCall } from '../support/graphs';
import { fakeProviderSettings } from '../support/llm-engine';
import { closedRunHistory } from '../support/run-history';
import { type TestWorker, startWorker } from '../support/worker';

const MODEL = 'openai/gpt-4o-mini';
/** Runs after which both workers must have made a call (each run goes to either: 2^-29 that one never does). */
const MAX_RUNS = 30;

type Run = { id: string; status: string; message: string | null; usage?: { cost_usd: number | null } | null };

describe('e2e: a setting changed through the API reaches every worker’s next call', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  let second: TestWorker;
  let oldProvider: FakeLlmServer;
  let newProvider: FakeLlmServer;
  let workflowId: string;

  before(async () => {
    engine = await startSplitEngine();
    second = await startWorker(engine.api.env);
    [oldProvider, newProvider] = await Promise.all([startFakeLlmServer(), startFakeLlmServer()]);
    await setAll(fakeProviderSettings(oldProvider));
    workflowId = (await engine.http.post('/wf/', { name: 'propagation', definition: oneLlmCall(MODEL) })).body.id;
  });
  after(async () => {
    await second?.stop();
    await engine?.close();
    await Promise.all([oldProvider?.close(), newProvider?.close()]);
  });

  async function setAll(settings: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(settings)) {
      const res = await engine.http.post('/env-mgmt/', { name, value });
      assert.equal(res.status, 200, res.text);
    }
  }

  /**
   * The worker (`pid@host`) whose activity took the run's model call first, with the settings it
   * held: it made the call, or refused it (a budget; a limit, after which a second activity makes
   * the call in a slot).
   */
  async function callerOf(runId: string): Promise<string> {
    // The call's activity saves the run's end itself, and Temporal writes an activity's started
    // event with its completion: the record ends before the history says who made the call.
    const history = await closedRunHistory(engine, runId);
    const started = (history.events ?? []).flatMap((e) => e.activityTaskStartedEventAttributes?.identity ?? []);
    assert.ok(started.length === 1 || started.length === 2, `run ${runId}: ${started.length} activities started`);
    return started[0] as string;
  }

  /**
   * Runs one at a time until both workers have made a call, each checked by `check`; the runs'
   * records. Fails when one worker made none in MAX_RUNS runs.
   */
  async function onBothWorkers(check: (run: Run) => void | Promise<void>): Promise<Run[]> {
    const workers = new Set([engine.worker, second].map((w) => `${w.process.pid}@${os.hostname()}`));
    const seen = new Set<string>();
    const runs: Run[] = [];
    for (let i = 0; i < MAX_RUNS && seen.size < workers.size; i++) {
      const started = await engine.http.post(`/wf/${workflowId}/start_run/`, {
        initial_inputs: { in: { x: `r${i}` } },
      });
      assert.equal(started.status, 200, started.text);
      await waitForRun(engine.http, started.body.id, undefined, 60_000);
      const run = (await engine.http.get(`/run/${started.body.id}/`)).body as Run;
      await check(run);
      const caller = await callerOf(run.id);
      assert.ok(workers.has(caller), `${caller} is one of the two workers`);
      seen.add(caller);
      runs.push(run);
    }
    assert.equal(seen.size, 2, `both workers made calls in ${MAX_RUNS} runs`);
    return runs;
  }

  /** Lets the documented bound pass after a change: calls that start from then on must see it. */
  const afterTheBound = () => new Promise((r) => setTimeout(r, SETTINGS_CHECK_MS + 50));
  const requestsTo = (fake: FakeLlmServer) => fake.requests.filter((r) => r.protocol !== null);

  it('a new base URL and key: every call after the bound goes to the new provider with the new key', async () => {
    await onBothWorkers((run) => assert.equal(run.status, 'COMPLETED', run.message ?? ''));
    const oldCount = requestsTo(oldProvider).length;
    assert.ok(oldCount >= 2);
    await setAll({ OPENAI_API_BASE: `${newProvider.url}/v1`, OPENAI_API_KEY: 'sk-new' });
    await afterTheBound();
    const runs = await onBothWorkers((run) => assert.equal(run.status, 'COMPLETED', run.message ?? ''));
    assert.equal(requestsTo(oldProvider).length, oldCount, 'the old provider got no call after the change');
    const sent = requestsTo(newProvider);
    assert.equal(sent.length, runs.length);
    for (const request of sent) assert.equal(request.headers.authorization, 'Bearer sk-new');
  });

  it('a price: every run after the bound costs what the new price says', async () => {
    // The fake reports 10 prompt and 10 completion tokens per call.
    const put = (usdPerMtok: number) =>
      engine.http.put(`/usage/prices/${MODEL}`, { input_usd_per_mtok: usdPerMtok, output_usd_per_mtok: usdPerMtok });
    assert.equal((await put(10)).status, 200);
    await afterTheBound();
    await onBothWorkers((run) => assert.equal(run.usage?.cost_usd, (20 * 10) / 1e6));
    assert.equal((await put(1000)).status, 200);
    await afterTheBound();
    await onBothWorkers((run) => assert.equal(run.usage?.cost_usd, (20 * 1000) / 1e6));
  });

  it('a budget: every run after the bound is held to it', async () => {
    await onBothWorkers((run) => assert.equal(run.status, 'COMPLETED', run.message ?? ''));
    // Any call's worst case (its prompt plus 50 output tokens at the price set above) passes it.
    const budget = await engine.http.put(`/wf/${workflowId}/budget/`, { per_run_usd: 0.000001, on_exceed: 'fail' });
    assert.equal(budget.status, 200, budget.text);
    const sentBefore = requestsTo(newProvider).length;
    await afterTheBound();
    const runs = await onBothWorkersRefused();
    assert.equal(requestsTo(newProvider).length, sentBefore, 'no call went out past the budget');
    assert.ok(runs.length >= 2);
    assert.equal((await engine.http.delete(`/wf/${workflowId}/budget/`)).status, 204);
  });

  /** As onBothWorkers, where every run fails at its model call, refused by the budget. */
  async function onBothWorkersRefused(): Promise<Run[]> {
    return onBothWorkers((run) => {
      assert.equal(run.status, 'FAILED');
      assert.match(run.message ?? '', /Budget per_run_usd/);
    });
  }

  it('a limit: every call after the bound waits for a slot of it', async () => {
    const signalled = async (runId: string) => {
      const history = await engine.api.temporal.workflow
        .getHandle(runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix))
        .fetchHistory();
      return (history.events ?? []).filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === slotGrantedSignal.name,
      ).length;
    };
    await onBothWorkers(async (run) => assert.equal(await signalled(run.id), 0, 'no limit, no slot granted'));
    const put = await engine.http.put('/limits/', [{ key: MODEL, max_concurrent: 5 }]);
    assert.equal(put.status, 200, put.text);
    await afterTheBound();
    await onBothWorkers(async (run) => {
      assert.equal(run.status, 'COMPLETED', run.message ?? '');
      assert.equal(await signalled(run.id), 1, 'the limit granted the call a slot');
    });
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
  });
});
