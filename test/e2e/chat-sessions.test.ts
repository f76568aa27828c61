import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { createSessionTurns } from '../../src/db/session-turns';
import { chatbotDefinition, turnsSent } from '../support/chatbot';
import { waitForRun, type Engine } from '../support/engine';
import { startLlmEngine } from '../support/llm-engine';
import { type FakeLlmServer } from '../support/fake-llm-server';

interface Message {
  id: string;
  run_id: string;
  content: { role: string; content: string };
  created_at: string;
}

describe('e2e: chatbots remember — sessions, users and server-side history', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let workflowId: string;

  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    const wf = await engine.http.post('/wf/', { name: 'chatty', definition: chatbotDefinition() });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    workflowId = wf.body.id;
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.respondWith(undefined);
  });

  /** The chat panel's way: start_run with `message_history: []`, then poll. */
  async function say(sessionId: string, text: string) {
    const started = await engine.http.post(`/wf/${workflowId}/start_run/?run_type=interactive`, {
      initial_inputs: { input_node: { user_message: text, session_id: sessionId, message_history: [] } },
      parent_run_id: null,
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const run = await waitForRun(engine.http, started.body.id, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    return run;
  }

  const sentTurns = () => fake.requests.map((r) => turnsSent(r.body));

  it("remembers across turns in the UI's flow (/session/test/ + start_run) and forgets in a fresh session", async () => {
    const session = await engine.http.post(`/session/test/?workflow_id=${workflowId}`);
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.match(session.body.id, /^SN\d+$/);
    assert.deepEqual(session.body.messages, []);
    const again = await engine.http.post(`/session/test/?workflow_id=${workflowId}`);
    assert.equal(again.body.id, session.body.id, 'an empty test session is reused');

    const first = await say(session.body.id, 'My name is Ann');
    const second = await say(session.body.id, 'What is my name?');
    assert.deepEqual(sentTurns(), [
      ['user: My name is Ann'],
      ['user: My name is Ann', 'assistant: echo: My name is Ann', 'user: What is my name?'],
    ]);

    const stored = await engine.http.get(`/session/${session.body.id}/`);
    assert.equal(stored.status, 200);
    const messages = stored.body.messages as Message[];
    assert.deepEqual(
      messages.map((m) => [m.content.role, m.content.content, m.run_id]),
      [
        ['user', 'My name is Ann', first.id],
        ['assistant', 'echo: My name is Ann', first.id],
        ['user', 'What is my name?', second.id],
        ['assistant', 'echo: What is my name?', second.id],
      ],
    );
    const times = messages.map((m) => Date.parse(m.created_at));
    for (let i = 1; i < times.length; i++)
      assert.ok(times[i]! > times[i - 1]!, `message ${i} is stamped after message ${i - 1}: ${stored.text}`);
    assert.equal(new Set(messages.map((m) => m.id)).size, 4);

    const fresh = await engine.http.post(`/session/test/?workflow_id=${workflowId}`);
    assert.notEqual(fresh.body.id, session.body.id, 'a session with messages is not reused');
    fake.requests.length = 0;
    await say(fresh.body.id, 'What is my name?');
    assert.deepEqual(sentTurns(), [['user: What is my name?']], 'memory is per session');
  });

  it("remembers in the API's flow (/user/, /session/, blocking run) and keeps user metadata", async () => {
    const metadata = { plan: 'pro', 'dotted.key': { $dollar: [[1, 2]] } };
    const user = await engine.http.post('/user/', { external_id: 'ann@example.com', user_metadata: metadata });
    assert.equal(user.status, 200, JSON.stringify(user.body));
    assert.match(user.body.id, /^U\d+$/);
    assert.deepEqual(user.body.user_metadata, metadata);
    assert.equal(
      (await engine.http.post('/user/', { external_id: 'ann@example.com' })).body.id,
      user.body.id,
      'get-or-create by external_id',
    );
    assert.deepEqual((await engine.http.get(`/user/${user.body.id}/`)).body.user_metadata, metadata);

    const session = await engine.http.post('/session/', {
      workflow_id: workflowId,
      user_id: user.body.id,
      external_id: 'conv-1',
    });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(
      (await engine.http.post('/session/', { workflow_id: workflowId, user_id: user.body.id, external_id: 'conv-1' }))
        .body.id,
      session.body.id,
    );
    const ask = (text: string) =>
      engine.http.post(`/wf/${workflowId}/run/`, {
        initial_inputs: { input_node: { user_message: text, session_id: session.body.id } },
      });
    const one = await ask('I like tea');
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.deepEqual(one.body.output_node, { assistant_message: 'echo: I like tea' });
    await ask('What do I like?');
    assert.deepEqual(sentTurns()[1], ['user: I like tea', 'assistant: echo: I like tea', 'user: What do I like?']);

    const mine = await engine.http.get(`/session/?user_id=${user.body.id}&workflow_id=${workflowId}`);
    assert.equal(mine.body.total, 1);
    assert.equal(mine.body.sessions[0].id, session.body.id);
    assert.equal(mine.body.sessions[0].messages.length, 4);
    const page = await engine.http.get(`/session/?workflow_id=${workflowId}&skip=0&limit=1`);
    assert.equal(page.body.sessions.length, 1);
    assert.ok(page.body.total >= 2);
    assert.equal((await engine.http.get('/session/?limit=101')).status, 422);

    assert.equal((await engine.http.post('/session/', { workflow_id: workflowId, user_id: 'U999999' })).status, 404);
    assert.equal((await engine.http.post('/session/', { workflow_id: 'S999999', user_id: user.body.id })).status, 404);
    assert.equal((await engine.http.post('/session/test/?workflow_id=S999999')).status, 404);
    assert.equal((await engine.http.get('/session/SN999999/')).status, 404);
    assert.equal((await engine.http.get('/user/not-a-user/')).status, 404);
  });

  it('appends in run order when two runs of one session are in flight, and a retried append adds nothing', async () => {
    const session = (await engine.http.post(`/session/test/?workflow_id=${workflowId}`)).body;
    // The first message's answer is slow, so the second run completes first.
    fake.respondWith((req) => (JSON.stringify(req.body).includes('slow one') ? { delayMs: 3000 } : undefined));
    const start = (text: string) =>
      engine.http.post(`/wf/${workflowId}/start_run/`, {
        initial_inputs: { input_node: { user_message: text, session_id: session.id, message_history: [] } },
      });
    const a = (await start('slow one')).body;
    const b = (await start('quick two')).body;
    const runB = await waitForRun(engine.http, b.id, undefined, 60_000);
    const runA = await waitForRun(engine.http, a.id, undefined, 60_000);
    assert.equal(runA.status, 'COMPLETED');
    assert.equal(runB.status, 'COMPLETED');
    const messages = (await engine.http.get(`/session/${session.id}/`)).body.messages as Message[];
    assert.deepEqual(
      messages.map((m) => `${m.run_id} ${m.content.role}`),
      [`${a.id} user`, `${a.id} assistant`, `${b.id} user`, `${b.id} assistant`],
    );

    // What a retried activity does: the same run's turn again.
    const turns = createSessionTurns(engine.api.models);
    const again = await turns.appendTurn({
      sessionId: session.id,
      runId: a.id,
      userMessage: 'slow one',
      userTime: new Date().toISOString(),
      assistantMessage: 'other',
    });
    assert.equal(again, 'already-stored');
    assert.equal((await engine.http.get(`/session/${session.id}/`)).body.messages.length, 4);
  });

  it('answers any OpenAI client at /v1/chat/completions with the chatbot reply, plain and streamed', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `${engine.api.baseUrl}/v1`, maxRetries: 0 });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'ignored: the workflow has its own' },
      { role: 'user', content: 'I am Bo' },
      { role: 'assistant', content: 'Hi Bo' },
      { role: 'user', content: 'Who am I?' },
    ];
    const completion = await openai.chat.completions.create({ model: workflowId, messages });
    assert.equal(completion.choices[0]?.message.content, 'echo: Who am I?');
    assert.equal(completion.object, 'chat.completion');
    assert.deepEqual(completion.usage, { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 });
    assert.deepEqual(
      sentTurns().at(-1),
      ['user: I am Bo', 'assistant: Hi Bo', 'user: Who am I?'],
      'the conversation the client sent is the history',
    );

    const stream = await openai.chat.completions.create({
      model: workflowId,
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, 'echo: stream it');
    assert.equal(finish, 'stop');

    await assert.rejects(
      openai.chat.completions.create({ model: 'S999999', messages }),
      (err: unknown) => err instanceof OpenAI.NotFoundError,
    );
    await assert.rejects(
      openai.chat.completions.create({ model: workflowId, messages: [{ role: 'system', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError,
    );
  });

  it("answers an OpenAI client configured as for PySpur, at PySpur's own path /api/api/v1", async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `${engine.api.baseUrl}/api/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: workflowId,
      messages: [{ role: 'user', content: 'through the double prefix' }],
    });
    assert.equal(completion.choices[0]?.message.content, 'echo: through the double prefix');
    assert.deepEqual(sentTurns().at(-1), ['user: through the double prefix']);
    await assert.rejects(
      openai.chat.completions.create({ model: 'S999999', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError,
    );
  });

  it('updates and deletes users and sessions (a deleted user takes its sessions along)', async () => {
    const bob = (await engine.http.post('/user/', { external_id: 'bob' })).body;
    const carl = (await engine.http.post('/user/', { external_id: 'carl', user_metadata: { a: 1 } })).body;
    const renamed = await engine.http.request('PATCH', `/user/${bob.id}/`, { user_metadata: { team: 'x' } });
    assert.equal(renamed.status, 200);
    assert.deepEqual(renamed.body, { ...bob, user_metadata: { team: 'x' }, updated_at: renamed.body.updated_at });
    assert.equal((await engine.http.request('PATCH', `/user/${bob.id}/`, { external_id: 'carl' })).status, 409);
    assert.equal((await engine.http.request('PATCH', `/user/U999999/`, { external_id: 'z' })).status, 404);
    const list = await engine.http.get('/user/?skip=0&limit=100');
    assert.ok(list.body.users.some((u: { id: string }) => u.id === carl.id));
    assert.equal(list.body.total, list.body.users.length);

    const s1 = (await engine.http.post('/session/', { workflow_id: workflowId, user_id: bob.id })).body;
    const s2 = (await engine.http.post('/session/', { workflow_id: workflowId, user_id: bob.id })).body;
    assert.equal((await engine.http.delete(`/session/${s1.id}/`)).status, 204);
    assert.equal((await engine.http.get(`/session/${s1.id}/`)).status, 404);
    assert.equal((await engine.http.delete(`/session/${s1.id}/`)).status, 404);
    assert.equal((await engine.http.delete(`/user/${bob.id}/`)).status, 204);
    assert.equal((await engine.http.get(`/user/${bob.id}/`)).status, 404);
    assert.equal((await engine.http.get(`/session/${s2.id}/`)).status, 404);
  });
});
