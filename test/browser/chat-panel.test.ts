import assert from 'node:assert/strict';
import { startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { assertNoProblems, openDashboard, startUiStack, type UiStack, useTemplate } from '../support/ui';

/**
 * The editor's chat panel over the chatbot template. The panel creates a test session
 * (`POST /session/test/`) and sends each turn with an empty `message_history`: the memory must
 * come from the server's session. Those routes arrive with the `chat-agents` branch, so this file
 * passes only once that branch is merged (on `web-ui` alone it fails on the 404 of /session/test/).
 */
describe('browser: the chat panel keeps context', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let fake: FakeLlmServer;
  before(async () => {
    stack = await startUiStack();
    fake = await startFakeLlmServer();
    for (const [name, value] of [['OPENAI_API_KEY', 'sk-chat'], ['OPENAI_API_BASE', `${fake.url}/v1`]]) {
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
    fake.enqueue({ content: '{"assistant_message": "Nice to meet you, Ada."}' }, { content: '{"assistant_message": "You are Ada."}' });
    await prompt.fill('Hi, my name is Ada.');
    await prompt.press('Enter');
    // The reply shows in the panel (the graph's nodes show it too: those are not the chat).
    const reply = (text: string) => page.locator('p:not(.react-flow__node p)', { hasText: text });
    await reply('Nice to meet you, Ada.').waitFor({ timeout: 90_000 });
    await prompt.fill('What is my name?');
    await prompt.press('Enter');
    await reply('You are Ada.').waitFor({ timeout: 90_000 });

    const second = fake.requests.at(-1)!.body.messages as { role: string; content: string }[];
    assert.deepEqual(second.filter((m) => m.role !== 'system').map((m) => m.content), ['Hi, my name is Ada.', 'Nice to meet you, Ada.', 'What is my name?']);
    assertNoProblems(stack.browser);
  });
});
