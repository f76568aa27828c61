// Bulk actions over runs (docs/runs.md, "Bulk actions"): what each action does to the runs a filter
// matched when it was made, through the loss of a worker and of an api, and who may do what.
import assert from 'node:assert/strict';
import { trusted } from 'mongoose';
import { runActionWorkflowId } from '../../src/contracts/run-action-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey, userWithKey } from '../support/access';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { gated } from '../support/approvals';
import { changedDocuments, databaseState } from '../support/db-state';
import { type SplitEngine, isFinal, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { fakeProviderSettings } from '../support/llm-engine';
import { pollDelays } from '../support/poll';
import { startWorker } from '../support/worker';

const ADMIN_KEY = 'spur_bulk-actions-admin-key-0123456789';
/** Runs the cancel acts on: enough pages (20 runs each) for a worker and an api to die mid-way. */
const MATCHED = 300;

type Http = ReturnType<typeof client>;

interface ActionAnswer {
  id: string | null;
  action: string;
  matched: number;
  status: string;
  done: number;
  failed: number;
  results: { run_id: string; outcome: string; new_run_id: string | null; error: string | null }[];
}

describe('e2e: bulk actions over runs', function () {
  this.timeout(600_000);
  let engine: SplitEngine;
  let secondApi: ApiProcess;
  let fake: FakeLlmServer;
  let admin: Http;
  let viewer: Http;
  let alice: Http;
  let aliceId: string;
  let bobId: string;
  let other: Http;

  before(async () => {
    // A page every 200 ms at most: 300 runs take 15 pages, long enough to kill processes in between.
    engine = await startSplitEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_RUN_ACTION_RATE: '100' });
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    secondApi = await startApiProcess(engine.api.env);
    viewer = client(engine.api.baseUrl, bearer((await userWithKey(admin, 'bulk-viewer', 'viewer')).key.key));
    const aliceMade = await userWithKey(admin, 'bulk-alice', 'approver');
    alice = client(engine.api.baseUrl, bearer(aliceMade.key.key));
    aliceId = aliceMade.user.id;
    bobId = (await userWithKey(admin, 'bulk-bob', 'approver')).user.id;
    const workspace = await admin.post('/access/workspaces/', { name: 'bulk-other' });
    assert.equal(workspace.status, 201, workspace.text);
    other = client(
      engine.api.baseUrl,
      bearer((await memberWithKey(admin, workspace.body.id, 'bulk-other-admin', 'admin')).key.key),
    );
    fake = await startFakeLlmServer();
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await admin.post('/env-mgmt/', { name, value })).status, 200);
  });
  after(async () => {
    await secondApi?.process.stop();
    await fake?.close();
    await engine?.close();
  });

  async function workflow(name: string, definition: unknown): Promise<string> {
    const wf = await admin.post('/wf/', { name, definition });
    assert.equal(wf.status, 200, wf.text);
    return wf.body.id as string;
  }

  async function startRuns(workflowId: string, count: number, x = (i: number) => `x${i}`): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, j) =>
          admin.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: x(i + j) } } }),
        ),
      );
      for (const res of batch) {
        assert.equal(res.status, 200, res.text);
        ids.push(res.body.id as string);
      }
    }
    return ids;
  }

  const statusesOf = async (runIds: string[]) =>
    (await engine.api.models.Run.find({ _id: trusted({ $in: runIds }) }, { status: 1 }).lean()).map(
      (r) => r.status as string,
    );

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 240_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const pause = pollDelays();
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
      await pause();
    }
  }

  const allIn = (runIds: string[], status: string) => async () =>
    (await statusesOf(runIds)).filter((s) => s === status).length === runIds.length;

  const actionOf = async (id: string, page = 1): Promise<ActionAnswer> => {
    const res = await admin.get(`/runs/actions/${id}/?page=${page}&page_size=100`);
    assert.equal(res.status, 200, res.text);
    return res.body as ActionAnswer;
  };

  /** Every result of an action, page by page. */
  async function resultsOf(id: string): Promise<ActionAnswer['results']> {
    const all: ActionAnswer['results'] = [];
    for (let page = 1; ; page++) {
      const { results } = await actionOf(id, page);
      all.push(...results);
      if (results.length < 100) return all;
    }
  }

  const ended = (id: string) => async () => (await actionOf(id)).status !== 'RUNNING';

  it('refuses a misspelt filter field, a limit over 10 000, a viewer, and an approver’s cancel: nothing matched, stored or acted on', async () => {
    const wf = await workflow('bulk-refusals', gated({}));
    const [run] = await startRuns(wf, 1);
    await until('the run to pause', allIn([run as string], 'PAUSED'));
    const before = await databaseState(engine.api.mongo);
    const misspelt = await admin.post('/runs/actions/', { filter: { workflow: wf }, action: 'cancel' });
    assert.equal(misspelt.status, 422, misspelt.text);
    assert.deepEqual(misspelt.body.detail[0].loc, ['body', 'filter', 'workflow']);
    const tooMany = await admin.post('/runs/actions/', {
      filter: { workflow_id: wf },
      action: 'cancel',
      limit: 10_001,
    });
    assert.equal(tooMany.status, 422, tooMany.text);
    const noNode = await admin.post('/runs/actions/', { filter: { workflow_id: wf }, action: 'rerun' });
    assert.equal(noNode.status, 422, noNode.text);
    assert.deepEqual(noNode.body.detail[0].loc, ['body', 'filter', 'node_id']);
    const byViewer = await viewer.post('/runs/actions/', { filter: { workflow_id: wf }, action: 'cancel' });
    assert.equal(byViewer.status, 403, byViewer.text);
    assert.match(byViewer.body.detail, /'pause\.decide'/);
    const cancelByApprover = await alice.post('/runs/actions/', { filter: { workflow_id: wf }, action: 'cancel' });
    assert.equal(cancelByApprover.status, 403, cancelByApprover.text);
    assert.match(cancelByApprover.body.detail, /'run'/);
    const after = await databaseState(engine.api.mongo);
    assert.deepEqual(changedDocuments(before, after), [], 'nothing stored or changed');
    assert.deepEqual(await statusesOf([run as string]), ['PAUSED']);
  });

  it('cancels every matched run exactly once through a worker’s and an api’s kill -9, and nothing else', async () => {
    const matchedWf = await workflow('bulk-cancel', gated({}));
    const untouchedWf = await workflow('bulk-cancel-other', gated({}));
    // Older than the matched runs: a filter that let them through would take them first.
    const untouched = await startRuns(untouchedWf, 3);
    const runs = await startRuns(matchedWf, MATCHED);
    await until('every run to pause', allIn([...runs, ...untouched], 'PAUSED'));

    // Made on the second api, which dies mid-way like the worker.
    const made = await client(secondApi.baseUrl, bearer(ADMIN_KEY)).post('/runs/actions/', {
      filter: { workflow_id: matchedWf, status: ['PAUSED'] },
      action: 'cancel',
      limit: MATCHED,
    });
    assert.equal(made.status, 200, made.text);
    const action = made.body as ActionAnswer;
    assert.match(action.id ?? '', /^RA\d+$/);
    assert.deepEqual([action.matched, action.status], [MATCHED, 'RUNNING']);
    // A run started after the action was made is not among its matches.
    const [later] = await startRuns(matchedWf, 1);

    await until('a first page acted on', async () => (await actionOf(action.id as string)).done >= 20);
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    secondApi.process.kill('SIGKILL');
    await secondApi.process.exited;
    assert.ok((await actionOf(action.id as string)).done < MATCHED, 'the kills came mid-way');
    engine.worker = await startWorker(engine.api.env);

    await until('the action to end', ended(action.id as string));
    const finished = await actionOf(action.id as string);
    assert.deepEqual(
      [finished.status, finished.matched, finished.done, finished.failed],
      ['COMPLETED', MATCHED, MATCHED, 0],
    );
    const results = await resultsOf(action.id as string);
    assert.deepEqual(results.map((r) => r.run_id).sort(), [...runs].sort(), 'one result per matched run');
    // A run cancelled just before the kill, whose page was then acted on again, had ended: skipped.
    for (const r of results) assert.ok(['canceled', 'skipped'].includes(r.outcome), JSON.stringify(r));
    await until('every matched run to end CANCELED', allIn(runs, 'CANCELED'));
    const prefix = engine.api.config.temporal.workflowIdPrefix;
    for (const runId of runs) {
      const history = await engine.api.temporal.workflow.getHandle(runWorkflowId(runId, prefix)).fetchHistory();
      const requests = (history.events ?? []).filter((e) => e.workflowExecutionCancelRequestedEventAttributes);
      assert.equal(requests.length, 1, `${runId}: cancel requested ${requests.length} times`);
    }
    await until('the later run to pause', allIn([later as string], 'PAUSED'));
    assert.deepEqual(await statusesOf([...untouched, later as string]), ['PAUSED', 'PAUSED', 'PAUSED', 'PAUSED']);

    // Stopping an action that has ended is a conflict.
    const stop = await admin.post(`/runs/actions/${action.id}/cancel/`);
    assert.equal(stop.status, 409, stop.text);
  });

  it('answers a dry run with the matches and changes nothing; the filter’s text is text, not a pattern', async () => {
    const wf = await workflow('bulk-dry', gated({}));
    const runs = await startRuns(wf, 3);
    await until('the runs to pause', allIn(runs, 'PAUSED'));
    const before = await databaseState(engine.api.mongo);
    const dry = await admin.post('/runs/actions/?page_size=2', {
      filter: { workflow_id: wf, status: ['PAUSED'] },
      action: 'cancel',
      dry_run: true,
    });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(
      { id: dry.body.id, status: dry.body.status, matched: dry.body.matched, done: dry.body.done },
      { id: null, status: 'DRY_RUN', matched: 3, done: 0 },
    );
    // The first page (page_size 2) of the matches, oldest first: two of the three runs, none acted on.
    const firstPage = dry.body.results as ActionAnswer['results'];
    assert.equal(firstPage.length, 2, dry.text);
    for (const r of firstPage) assert.ok(runs.includes(r.run_id) && r.outcome === 'pending', JSON.stringify(r));
    // Canceled runs say "Workflow has been canceled successfully.": found by its words, not by a pattern.
    const words = await admin.post('/runs/actions/', {
      filter: { status: ['CANCELED'], error_contains: 'CANCELED SUCCESSFULLY' },
      action: 'retry',
      dry_run: true,
    });
    assert.equal(words.body.matched, MATCHED);
    const pattern = await admin.post('/runs/actions/', {
      filter: { status: ['CANCELED'], error_contains: 'canceled.*' },
      action: 'retry',
      dry_run: true,
    });
    assert.equal(pattern.body.matched, 0, pattern.text);
    assert.deepEqual(changedDocuments(before, await databaseState(engine.api.mongo)), [], 'nothing stored or changed');
    assert.deepEqual(await statusesOf(runs), ['PAUSED', 'PAUSED', 'PAUSED']);
  });

  it('acts on a selection of runs only, and on a selection’s runs paused at a node only when both are given', async () => {
    const wf = await workflow('bulk-selection', gated({}));
    const runs = await startRuns(wf, 4);
    await until('the runs to pause', allIn(runs, 'PAUSED'));
    const [a, b, c, d] = runs as [string, string, string, string];
    const elsewhere = await admin.post('/runs/actions/', {
      filter: { run_ids: [a, b], node_id: 'not-the-gate' },
      action: 'cancel',
      dry_run: true,
    });
    assert.equal(elsewhere.body.matched, 0, elsewhere.text);
    const made = await admin.post('/runs/actions/', {
      filter: { run_ids: [a, c, c, 'R-no-such-run'] },
      action: 'cancel',
    });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.matched, 2, made.text);
    await until('the selection to be acted on', ended(made.body.id as string));
    assert.deepEqual(
      (await resultsOf(made.body.id as string)).map((r) => [r.run_id, r.outcome]).sort(),
      [
        [a, 'canceled'],
        [c, 'canceled'],
      ].sort(),
    );
    assert.deepEqual(await statusesOf([a, c]), ['CANCELED', 'CANCELED']);
    assert.deepEqual(await statusesOf([b, d]), ['PAUSED', 'PAUSED']);
    const tooMany = await admin.post('/runs/actions/', {
      filter: { run_ids: Array.from({ length: 1001 }, (_, i) => `R${i}`) },
      action: 'cancel',
      dry_run: true,
    });
    assert.equal(tooMany.status, 422, tooMany.text);
    assert.match(tooMany.text, /run_ids/);
  });

  it('stops an action mid-way: the runs it has not reached stay pending, and it acts on no more', async () => {
    // The 300 runs cancelled above: each is skipped (it has ended), a page every 200 ms at most.
    const made = await admin.post('/runs/actions/', { filter: { status: ['CANCELED'] }, action: 'cancel' });
    assert.equal(made.status, 200, made.text);
    const id = made.body.id as string;
    await until('a first page acted on', async () => (await actionOf(id)).done >= 20);
    const stopped = await admin.post(`/runs/actions/${id}/cancel/`);
    assert.equal(stopped.status, 200, stopped.text);
    assert.equal(stopped.body.status, 'CANCELED');
    const handle = engine.api.temporal.workflow.getHandle(
      runActionWorkflowId(id, engine.api.config.temporal.workflowIdPrefix),
    );
    await handle.result().catch(() => undefined);
    const results = await resultsOf(id);
    const reached = results.filter((r) => r.outcome !== 'pending');
    assert.ok(reached.length < MATCHED, `${reached.length} of ${MATCHED} reached before the stop`);
    for (const r of reached) assert.equal(r.outcome, 'skipped', JSON.stringify(r));
    const final = await actionOf(id);
    assert.deepEqual([final.status, final.done, final.failed], ['CANCELED', reached.length, 0]);
    assert.equal((await admin.post(`/runs/actions/${id}/cancel/`)).status, 409, 'a stopped action stays stopped');
  });

  it('shows another workspace nothing: its filter matches none of ours, our action is 404 to it and is not stopped', async () => {
    const wf = await workflow('bulk-workspaces', gated({}));
    const runs = await startRuns(wf, 2);
    await until('the runs to pause', allIn(runs, 'PAUSED'));
    const ours = await admin.post('/runs/actions/', { filter: { workflow_id: 'S0none' }, action: 'cancel' });
    assert.equal(ours.status, 200, ours.text);
    await until('our action to end', ended(ours.body.id as string));

    for (const filter of [{ workflow_id: wf }, { run_ids: runs }, {}]) {
      const theirs = await other.post('/runs/actions/', { filter, action: 'cancel' });
      assert.equal(theirs.status, 200, theirs.text);
      assert.equal(theirs.body.matched, 0, `${JSON.stringify(filter)} matched nothing of ours: ${theirs.text}`);
    }
    const read = await other.get(`/runs/actions/${ours.body.id}/`);
    assert.equal(read.status, 404, read.text);
    assert.ok(!read.text.includes(wf), read.text);
    const stop = await other.post(`/runs/actions/${ours.body.id}/cancel/`);
    assert.equal(stop.status, 404, stop.text);
    assert.equal((await actionOf(ours.body.id as string)).status, 'COMPLETED');
    assert.deepEqual(await statusesOf(runs), ['PAUSED', 'PAUSED']);
  });

  it('approves, as an approver, only the pauses whose approvers name her; the others fail undecided', async () => {
    const hers = await workflow('bulk-hers', gated({ approvers: { users: [aliceId] } }));
    const bobs = await workflow('bulk-bobs', gated({ approvers: { users: [bobId] } }));
    const herRuns = await startRuns(hers, 2);
    const bobRuns = await startRuns(bobs, 2);
    await until('the runs to pause', allIn([...herRuns, ...bobRuns], 'PAUSED'));
    for (const wf of [hers, bobs]) {
      const made = await alice.post('/runs/actions/', {
        filter: { workflow_id: wf, node_id: 'gate' },
        action: 'approve',
      });
      assert.equal(made.status, 200, made.text);
      await until('the approval to end', ended(made.body.id as string));
    }
    await until('her runs to complete', allIn(herRuns, 'COMPLETED'));
    const actions = await engine.api.models.RunAction.find({ action: 'approve' }).sort({ seq: 1 }).lean();
    const [mine, refused] = await Promise.all(actions.map((a) => resultsOf(a._id as string)));
    assert.deepEqual(
      mine?.map((r) => r.outcome),
      ['approved', 'approved'],
    );
    assert.deepEqual(
      refused?.map((r) => [r.outcome, /is not among the approvers of node 'gate'/.test(r.error ?? '')]),
      [
        ['failed', true],
        ['failed', true],
      ],
    );
    assert.deepEqual(await statusesOf(bobRuns), ['PAUSED', 'PAUSED']);
    const pauses = await engine.api.models.Pause.find({ run_id: trusted({ $in: bobRuns }) }).lean();
    assert.deepEqual(
      pauses.map((p) => [p.resume_time, p.decisions]),
      [
        [null, null],
        [null, null],
      ],
      'no decision recorded on his pauses',
    );
  });

  it('retries the runs a provider outage failed, then reruns them from the model’s node: exactly one new run each, with the same inputs, completed', async () => {
    const llm = {
      nodes: [
        input(),
        n('ask', 'SingleLLMCallNode', {
          llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50 },
          user_message: 'say {{in.x}}',
          max_retries: 0,
        }),
        n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
      ],
      links: [l('in', 'ask'), l('ask', 'out')],
    };
    const wf = await workflow('bulk-retry', llm);
    fake.respondWith(() => ({ status: 500 }));
    const failed = await startRuns(wf, 3, (i) => `outage ${i}`);
    await until('the runs to fail', allIn(failed, 'FAILED'));
    fake.respondWith(undefined);

    const made = await admin.post('/runs/actions/', {
      filter: { workflow_id: wf, status: ['FAILED'] },
      action: 'retry',
    });
    assert.equal(made.status, 200, made.text);
    await until('the retry to end', ended(made.body.id as string));
    const finished = await actionOf(made.body.id as string);
    assert.deepEqual(
      [finished.status, finished.matched, finished.done, finished.failed],
      ['COMPLETED', 3, 3, 0],
      JSON.stringify(finished.results),
    );
    // The runs started together: matched oldest first, not necessarily in the order they were sent.
    const xOf = new Map(failed.map((id, i) => [id, `outage ${i}`]));
    assert.deepEqual(finished.results.map((r) => r.run_id).sort(), [...failed].sort());
    const newRuns = finished.results.map((r) => {
      assert.equal(r.outcome, 'retried', JSON.stringify(r));
      return r.new_run_id as string;
    });
    await until('the new runs to end', async () => (await statusesOf(newRuns)).every((s) => isFinal({ status: s })));
    for (const result of finished.results) {
      const run = (await admin.get(`/run/${result.new_run_id}/`)).body;
      assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
      assert.deepEqual(run.initial_inputs, { in: { x: xOf.get(result.run_id) } });
      assert.equal(run.outputs.out.answer, `echo: say ${xOf.get(result.run_id)}`);
    }
    const all = await engine.api.models.Run.find({ workflow_id: wf }, { _id: 1 }).lean();
    assert.equal(all.length, 6, 'the three failed runs and one new run for each');

    // The same failed runs rerun from the model's node: each a rerun of its own, reusing its input.
    const rerun = await admin.post('/runs/actions/', {
      filter: { workflow_id: wf, status: ['FAILED'], node_id: 'ask' },
      action: 'rerun',
    });
    assert.equal(rerun.status, 200, rerun.text);
    await until('the rerun to end', ended(rerun.body.id as string));
    const reran = await actionOf(rerun.body.id as string);
    assert.deepEqual([reran.done, reran.failed], [3, 0], JSON.stringify(reran.results));
    assert.deepEqual(reran.results.map((r) => r.run_id).sort(), [...failed].sort());
    for (const result of reran.results) {
      assert.equal(result.outcome, 'rerun', JSON.stringify(result));
      const run = await waitForRun(admin, result.new_run_id as string);
      assert.deepEqual(
        [run.status, run.rerun_of, run.rerun_from_node_id, run.outputs.out.answer],
        ['COMPLETED', result.run_id, 'ask', `echo: say ${xOf.get(result.run_id)}`],
      );
    }
  });
});
