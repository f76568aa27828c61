import assert from 'node:assert/strict';
import type { Locator } from 'playwright-core';
import { startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { assertNoProblems, openDashboard, startUiStack, type UiStack, useTemplate } from '../support/ui';

/**
 * Types `text` into the panel's prompt and presses Enter, as a user does, until the message shows in
 * the panel as sent. PySpur's panel builds its prompt input anew whenever the editor's nodes, the
 * session or the loading state change (the input component is a callback of them), and the new one
 * starts empty: text typed just before is dropped and Enter then sends nothing (seen under load,
 * no request made). A user types it again; so does this. The panel shows a sent message at once,
 * before its request, so a message not shown after a few seconds was not sent.
 */
async function send(prompt: Locator, bubble: (text: string) => Locator, text: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await prompt.fill(text);
    await prompt.press('Enter');
    try {
      await bubble(text).waitFor({ timeout: 5_000 });
      return;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

/**
 * The editor's chat panel over the chatbot template. The panel creates a test session
 * (`POST /session/test/`) and sends each turn with an empty `message_history`: the memory must
 * come from the server's session.
 */
describe('browser: the chat panel keeps context', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let fake: FakeLlmServer;
  before(async () => {
    stack = await startUiStack();
    fake = await startFakeLlmServer();
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-chat'],
    ]) {
      assert.equal((await stack.engine.http.post('/env-mgmt/', { name, value })).status, 200);
    }
    await openDashboard(stack, true);
  });
  after(async () => {
    await stack?.close();
    await fake?.close();
  });

  it('a chatbot answers two messages, the second with the first in its context', async () => {
    const { page } = stack;
    await useTemplate(page, 'Chatbot that remembers the conversation');
    await page.locator('.react-flow__node[data-id="assistant"]').waitFor();

    const prompt = page.getByPlaceholder(/Enter a prompt here|Send a message/).first();
    // The reply shows in the panel (the graph's nodes show it too: those are not the chat).
    const bubble = (text: string) => page.locator('p:not(.react-flow__node p)', { hasText: text });
    // The panel sends a turn with the session it shows once its id is there; before that it would
    // use a made-up one.
    await page.getByText(/^Session ID: SN\d+$/).waitFor();
    fake.enqueue(
      { content: '{"assistant_message": "Nice to meet you, Ada."}' },
      { content: '{"assistant_message": "You are Ada."}' },
    );
    await send(prompt, bubble, 'Hi, my name is Ada.');
    await bubble('Nice to meet you, Ada.').waitFor({ timeout: 90_000 });
    await send(prompt, bubble, 'What is my name?');
    await bubble('You are Ada.').waitFor({ timeout: 90_000 });
    assert.equal(fake.requests.length, 2, 'one model call per message');

    const second = fake.requests.at(-1)!.body.messages as { role: string; content: string }[];
    assert.deepEqual(
      second.filter((m) => m.role !== 'system').map((m) => m.content),
      ['Hi, my name is Ada.', 'Nice to meet you, Ada.', 'What is my name?'],
    );
    assertNoProblems(stack.browser);
  });
});
