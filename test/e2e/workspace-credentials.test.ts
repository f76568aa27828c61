import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey } from '../support/access';
import { plainRequest } from '../support/browser-login';
import { chatbotDefinition } from '../support/chatbot';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { createSuite, uploadRows, waitForEval } from '../support/evals';
import { type FakeLlmServer, type RecordedRequest, startFakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { eventually } from '../support/python-runs';

/**
 * The line: "a fake provider records which key each request carried; a run of workspace B
 * never carries A's key, for every kind of run start". Every run below puts a marker naming its
 * start kind into its prompt, so each provider request says which start it came from.
 *
 * Two fake providers, one per workspace (default's OPENAI_API_BASE points at one, team B's at the
 * other): besides the key, where a request arrives tells whose settings it was sent with, so a run
 * of B that read default's base (with any key) is caught too, and default's provider receiving
 * anything of B's is a leak whatever key it carried.
 */

const ADMIN_KEY = 'spur_workspace-credentials-admin-0123456789';
const DEFAULT_OPENAI_KEY = 'sk-default-0123456789abcdef';
const TEAM_B_OPENAI_KEY = 'sk-team-b-fedcba9876543210';
const MODEL = 'openai/gpt-4o-mini';

/** The text a run puts in its prompt: unique per start kind, and no marker contains another. */
const marker = (kind: string) => `<<start-kind:${kind}>>`;

/** in(x) → llm (its prompt carries in.x) → out(answer): one provider request per run. */
const probe = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('llm', 'SingleLLMCallNode', {
      llm_info: { model: MODEL, max_tokens: 100, temperature: 0 },
      user_message: 'Credential probe {{in.x}}',
    }),
    n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'llm.output' } }),
  ],
  links: [l('in', 'llm'), l('llm', 'out')],
};

/**
 * The fake's replies: as the eval's judge it passes the answer (so the eval completes); asked
 * anything else it echoes the prompt (the fake's default), so a run's answer shows its marker.
 */
function judgeOrEcho(request: RecordedRequest) {
  const system = String(request.body?.messages?.[0]?.content ?? '');
  if (system.startsWith('You grade answers')) return { content: JSON.stringify({ correct: true, reason: 'fine' }) };
  return undefined;
}

type Http = ReturnType<typeof client>;
interface Seen {
  provider: 'default' | 'team-b';
  request: RecordedRequest;
}

describe("e2e: a workspace's runs carry its own provider key, for every kind of run start", function () {
  this.timeout(180_000);
  let engine: Engine;
  let admin: Http;
  /** A builder's key in team B: starts B's runs (the credentials are set by B's admin, not by them). */
  let teamB: Http;
  let teamBKey: string;
  /** A builder's key in workspace C, which has no credentials at all. */
  let teamC: Http;
  let teamBAdmin: Http;
  let workspaceB: string;
  const fakes = {} as Record<Seen['provider'], FakeLlmServer>;
  /** Team B's probe workflow, and its chatbot (the OpenAI-compatible endpoint's input shape). */
  let probeWf: string;
  let chatWf: string;

  /** Every provider request, at either fake, whose body contains the marker. */
  const naming = (text: string): Seen[] =>
    (Object.entries(fakes) as [Seen['provider'], FakeLlmServer][]).flatMap(([provider, fake]) =>
      fake.requests
        .filter((r) => JSON.stringify(r.body ?? '').includes(text))
        .map((request) => ({ provider, request })),
    );

  /** The claim for one start kind: it reached a provider, and only ever B's, with B's key. */
  function assertCarriedTeamBKeyOnly(kind: string) {
    const seen = naming(marker(kind));
    assert.ok(seen.length >= 1, `no provider request names ${kind}: the oracle would be vacuous`);
    for (const { provider, request } of seen) {
      assert.equal(provider, 'team-b', `${kind}: a request went to default's provider (${request.path})`);
      assert.equal(request.headers.authorization, `Bearer ${TEAM_B_OPENAI_KEY}`, `${kind}: the key it carried`);
    }
  }

  /** Bases first: a key is used only with the base it was entered under. */
  async function setOpenAi(who: Http, fake: FakeLlmServer, key: string) {
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', key],
    ]) {
      const res = await who.post('/env-mgmt/', { name, value });
      assert.equal(res.status, 200, `setting ${name}: ${res.text}`);
    }
  }

  async function newWorkflow(who: Http, name: string, definition: unknown): Promise<string> {
    const res = await who.post('/wf/', { name, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  async function completed(who: Http, runId: string) {
    const run = await waitForRun(who, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
  }

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    admin = client(engine.api.baseUrl, bearer(ADMIN_KEY));
    fakes.default = await startFakeLlmServer();
    fakes['team-b'] = await startFakeLlmServer();
    for (const fake of Object.values(fakes)) fake.respondWith(judgeOrEcho);

    const workspace = async (name: string) => {
      const made = await admin.post('/access/workspaces/', { name });
      assert.equal(made.status, 201, made.text);
      return made.body.id as string;
    };
    const b = await workspace('team-b');
    const c = await workspace('team-c');
    // Members of their team's workspace only: carol administers B, and nothing of default.
    const keyIn = async (username: string, role: 'admin' | 'builder', workspaceId: string) =>
      (await memberWithKey(admin, workspaceId, username, role)).key.key;
    teamBAdmin = client(engine.api.baseUrl, bearer(await keyIn('carol', 'admin', b)));
    workspaceB = b;
    teamBKey = await keyIn('bob', 'builder', b);
    teamB = client(engine.api.baseUrl, bearer(teamBKey));
    teamC = client(engine.api.baseUrl, bearer(await keyIn('dave', 'builder', c)));

    await setOpenAi(admin, fakes.default, DEFAULT_OPENAI_KEY);
    await setOpenAi(teamBAdmin, fakes['team-b'], TEAM_B_OPENAI_KEY);

    probeWf = await newWorkflow(teamB, 'Credential probe', probe);
    chatWf = await newWorkflow(teamB, 'Credential chatbot', chatbotDefinition(MODEL));
  });
  after(async () => {
    await engine?.close();
    await Promise.all(Object.values(fakes).map((fake) => fake.close()));
  });

  const inputs = (kind: string) => ({ initial_inputs: { in: { x: marker(kind) } } });

  it("blocking run (POST /wf/{id}/run/): answered through B's provider, every request with B's key", async () => {
    const res = await teamB.post(`/wf/${probeWf}/run/`, inputs('blocking'));
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.body.out?.answer), /<<start-kind:blocking>>/, 'the answer came from the fake');
    assertCarriedTeamBKeyOnly('blocking');
  });

  it("blocking run v2 (POST /wf/{id}/runv2/): completed, every request with B's key", async () => {
    const res = await teamB.post(`/wf/${probeWf}/runv2/`, inputs('runv2'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'COMPLETED');
    assertCarriedTeamBKeyOnly('runv2');
  });

  it("non-blocking run (POST /wf/{id}/start_run/): completed, every request with B's key", async () => {
    const res = await teamB.post(`/wf/${probeWf}/start_run/`, inputs('start_run'));
    assert.equal(res.status, 200, res.text);
    await completed(teamB, res.body.id);
    assertCarriedTeamBKeyOnly('start_run');
  });

  it("partial run (POST /wf/{id}/run_partial/) of the LLM node: answered, every request with B's key", async () => {
    const res = await teamB.post(`/wf/${probeWf}/run_partial/`, { node_id: 'llm', ...inputs('partial') });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.body.llm?.output), /<<start-kind:partial>>/);
    assertCarriedTeamBKeyOnly('partial');
  });

  it("rerun (POST /run/{id}/rerun/) from the LLM node with new input: completed, every request with B's key", async () => {
    const original = await teamB.post(`/wf/${probeWf}/start_run/`, inputs('rerun-original'));
    assert.equal(original.status, 200, original.text);
    await completed(teamB, original.body.id);
    const res = await teamB.post(`/run/${original.body.id}/rerun/`, {
      from_node_id: 'llm',
      input_overrides: { in: { x: marker('rerun') } },
    });
    assert.equal(res.status, 200, res.text);
    await completed(teamB, res.body.id);
    assertCarriedTeamBKeyOnly('rerun-original');
    assertCarriedTeamBKeyOnly('rerun');
  });

  it("batch over a dataset (POST /wf/{id}/start_batch_run/): completed, every row's request with B's key", async () => {
    const dataset = await uploadRows(teamB, 'credential rows', [{ x: marker('batch') }, { x: marker('batch') }]);
    const res = await teamB.post(`/wf/${probeWf}/start_batch_run/`, { dataset_id: dataset, mini_batch_size: 2 });
    assert.equal(res.status, 200, res.text);
    await completed(teamB, res.body.id);
    assert.equal(naming(marker('batch')).length, 2, 'one request per row');
    assertCarriedTeamBKeyOnly('batch');
  });

  it("schedule trigger-now (POST /schedules/{id}/trigger/): completed, every request with B's key", async () => {
    const sc = await teamB.post(`/wf/${probeWf}/schedules/`, {
      interval_seconds: 3600,
      paused: true,
      ...inputs('schedule-trigger-now'),
    });
    assert.equal(sc.status, 200, sc.text);
    const res = await teamB.post(`/schedules/${sc.body.id}/trigger/`, {});
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.run_type, 'scheduled');
    await completed(teamB, res.body.id);
    assert.equal((await teamB.delete(`/schedules/${sc.body.id}/`)).status, 204);
    assertCarriedTeamBKeyOnly('schedule-trigger-now');
  });

  it("schedule fire (its Temporal Schedule starts the run, no request does): completed, every request with B's key", async () => {
    const sc = await teamB.post(`/wf/${probeWf}/schedules/`, { interval_seconds: 10, ...inputs('schedule-fire') });
    assert.equal(sc.status, 200, sc.text);
    let fired: { status: string };
    try {
      // The first fire comes within an interval; the run it records names the schedule as its trigger.
      fired = await eventually(
        "a run of the schedule's fire ended",
        async () => {
          const runs = (await teamB.get(`/wf/${probeWf}/runs/?page_size=100`)).body as {
            status: string;
            trigger: { id: string } | null;
          }[];
          return runs.find((r) => r.trigger?.id === sc.body.id && !['PENDING', 'RUNNING'].includes(r.status));
        },
        120_000,
      );
    } finally {
      // Its Temporal Schedule is on the shared server: it must not go on firing after this test.
      assert.equal((await teamB.delete(`/schedules/${sc.body.id}/`)).status, 204);
    }
    assert.equal(fired.status, 'COMPLETED', JSON.stringify(fired));
    assertCarriedTeamBKeyOnly('schedule-fire');
  });

  it("webhook delivery (POST /hooks/{token}, no API key): answered with the result, every request with B's key", async () => {
    const trigger = await teamB.post(`/wf/${probeWf}/triggers/`, {
      name: 'credential hook',
      respond: 'result',
      input_mapping: { x: '/x' },
    });
    assert.equal(trigger.status, 200, trigger.text);
    const delivered = await plainRequest(new URL(engine.api.baseUrl).origin, 'POST', trigger.body.url, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x: marker('webhook') }),
    });
    assert.equal(delivered.status, 200, delivered.body);
    assert.match(delivered.body, /<<start-kind:webhook>>/, 'the result came from the fake');
    assertCarriedTeamBKeyOnly('webhook');
  });

  it("MCP tools/call (POST /api/mcp with B's key) of the published workflow: answered, every request with B's key", async () => {
    const put = await teamB.put(`/wf/${probeWf}/mcp/`, { enabled: true, tool_name: 'credential_probe' });
    assert.equal(put.status, 200, put.text);
    const mcp = new Client({ name: 'spur-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${engine.api.baseUrl}/mcp`), {
        requestInit: { headers: bearer(teamBKey) },
      }),
    );
    try {
      const result = await mcp.callTool({ name: 'credential_probe', arguments: { x: marker('mcp') } });
      assert.ok(!result.isError, JSON.stringify(result));
      assert.match(JSON.stringify(result.content), /<<start-kind:mcp>>/);
    } finally {
      await mcp.close();
    }
    assertCarriedTeamBKeyOnly('mcp');
  });

  it("eval launch (POST /evals/launch/) with an LLM judge: completed, the workflow's and the judge's requests with B's key", async () => {
    const dataset = await uploadRows(teamB, 'credential eval rows', [{ x: marker('eval'), answer: 'anything' }]);
    const suite = await createSuite(teamB, {
      name: 'credential suite',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['x'],
      scorer: { type: 'llm_judge', model: MODEL },
    });
    const res = await teamB.post('/evals/launch/', {
      workflow_id: probeWf,
      eval_name: suite.name,
      output_variable: 'out-answer',
      num_samples: 1,
    });
    assert.equal(res.status, 200, res.text);
    const run = await waitForEval(teamB, res.body.run_id);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
    const seen = naming(marker('eval'));
    assert.ok(
      seen.some((s) => String(s.request.body.messages[0].content).startsWith('You grade answers')),
      "the judge's request names the eval too (it grades the workflow's answer)",
    );
    assertCarriedTeamBKeyOnly('eval');
  });

  it("OpenAI-compatible chat completion (POST /api/v1/chat/completions) of B's chatbot: answered, every request with B's key", async () => {
    const res = await teamB.post('/v1/chat/completions', {
      model: chatWf,
      messages: [{ role: 'user', content: marker('openai-compat') }],
    });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.body.choices?.[0]?.message?.content), /<<start-kind:openai-compat>>/);
    assertCarriedTeamBKeyOnly('openai-compat');
  });

  it('a workspace with no credentials: its run fails naming the missing key, and no provider got its input', async () => {
    const wf = await newWorkflow(teamC, 'Credential probe', probe);
    const res = await teamC.post(`/wf/${wf}/start_run/`, inputs('workspace-c'));
    assert.equal(res.status, 200, res.text);
    const run = await waitForRun(teamC, res.body.id, undefined, 120_000);
    assert.equal(run.status, 'FAILED', JSON.stringify(run));
    const detail = (await teamC.get(`/run/${res.body.id}/`)).body;
    assert.match(String(detail.message), /OPENAI_API_KEY is not set/);
    assert.deepEqual(naming(marker('workspace-c')), [], "neither default's key nor B's was used for C");
  });

  it("default's own run carries default's key to default's provider (the oracle above can fail)", async () => {
    const wf = await newWorkflow(admin, 'Credential probe', probe);
    const res = await admin.post(`/wf/${wf}/run/`, inputs('default-workspace'));
    assert.equal(res.status, 200, res.text);
    const seen = naming(marker('default-workspace'));
    assert.ok(seen.length >= 1);
    for (const { provider, request } of seen) {
      assert.equal(provider, 'default');
      assert.equal(request.headers.authorization, `Bearer ${DEFAULT_OPENAI_KEY}`);
    }
  });

  it("usage is the workspace's own; an installation admin reads every workspace's side by side, B's admin may not", async () => {
    const ledger = async (who: Http, path: string) => {
      const res = await who.get(path);
      assert.equal(res.status, 200, res.text);
      return res.body as { groups: Array<{ key: string; calls: number }>; total: { calls: number } };
    };
    const ofDefault = await ledger(admin, '/usage/?group_by=workflow');
    const ofB = await ledger(teamBAdmin, '/usage/?group_by=workflow');
    // Default ran one single-call workflow (the test before): its provider's requests are its calls.
    assert.equal(ofDefault.total.calls, fakes.default.requests.length);
    assert.ok(ofB.total.calls >= 10, `B's calls: ${ofB.total.calls}`);
    for (const { key } of ofB.groups) assert.equal((await teamB.get(`/wf/${key}/`)).status, 200, `${key} is B's`);
    for (const { key } of ofDefault.groups)
      assert.equal((await teamB.get(`/wf/${key}/`)).status, 404, `${key} is not B's`);

    const side = await ledger(admin, '/usage/workspaces/');
    assert.deepEqual(
      side.groups.map((g) => [g.key, g.calls]),
      [
        ['default', ofDefault.total.calls],
        [workspaceB, ofB.total.calls],
      ].sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    assert.equal(side.total.calls, ofDefault.total.calls + ofB.total.calls);
    const refused = await teamBAdmin.get('/usage/workspaces/');
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.detail, /usage\.all/);
  });

  // Last, once every start kind above has run: a request of B's that named no marker is caught here.
  it("default's provider received nothing but default's run, and B's provider never saw default's key", async () => {
    const toDefault = fakes.default.requests.map((r) => JSON.stringify(r.body ?? ''));
    assert.ok(toDefault.length >= 1);
    assert.ok(
      toDefault.every((body) => body.includes(marker('default-workspace'))),
      `default's provider got: ${toDefault.join('\n')}`,
    );
    const keysAtB = new Set(fakes['team-b'].requests.map((r) => r.headers.authorization));
    assert.deepEqual([...keysAtB], [`Bearer ${TEAM_B_OPENAI_KEY}`]);
  });
});
