import { startApi, type TestApi } from './api';
import type { FakeLlmServer, RecordedRequest } from './fake-llm-server';
import { type Cfg, input, l, n } from './graphs';
import { client } from './http';
import { attachFakeLlm } from './llm-engine';
import { nodeAttempts } from './node-attempts';

/** The model the drain tests call: its requests land at the fake provider, one per node attempt. */
export const MODEL = 'openai/gpt-4o-mini';

export interface DrainStack {
  api: TestApi;
  http: ReturnType<typeof client>;
  fake: FakeLlmServer;
  /** The workflow `in(x) → ask ("say {{in.x}}") → out(answer)`. */
  workflowId: string;
  /** The worker pid that took the latest attempt of node `ask` of a run, and its state. */
  askAttempt(runId: string): Promise<{ workerPid: number | null; attempt: number; state: string } | undefined>;
  close(): Promise<void>;
}

/** in(x) → ask (one call of MODEL: "say {{in.x}}", with `askConfig`) → out(answer). */
export const askOnce = (askConfig: Cfg) => ({
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', {
      llm_info: { model: MODEL, max_tokens: 50 },
      user_message: 'say {{in.x}}',
      ...askConfig,
    }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
});

/**
 * An api alone (its workers are processes a test starts and signals) whose model calls go to a fake
 * provider; `askConfig` adds to the model node's config (its timeouts).
 */
export async function startDrainStack(askConfig: Cfg = {}): Promise<DrainStack> {
  const api = await startApi();
  const http = client(api.baseUrl);
  const fake = await attachFakeLlm({ api, http, close: () => api.close() });
  const wf = await http.post('/wf/', { name: 'drain', definition: askOnce(askConfig) });
  if (wf.status !== 200) throw new Error(`creating the workflow: ${wf.status} ${wf.text}`);
  return {
    api,
    http,
    fake,
    workflowId: wf.body.id,
    async askAttempt(runId) {
      const all = await nodeAttempts(api.temporal, api.config.temporal.workflowIdPrefix, runId);
      return all.filter((a) => a.node === 'ask').at(-1);
    },
    async close() {
      await fake.close();
      await api.close();
    },
  };
}

/** The prompt of a model request: `say <x>` for the run whose input was x. */
export function promptOf(request: RecordedRequest): string {
  const messages: { role?: string; content?: unknown }[] = Array.isArray(request.body?.messages)
    ? request.body.messages
    : [];
  const last = messages.filter((m) => m.role === 'user').at(-1)?.content;
  return typeof last === 'string' ? last : JSON.stringify(last);
}

/** The model requests made for the run whose input was `x`. */
export const callsFor = (fake: FakeLlmServer, x: string) =>
  fake.requests.filter((r) => r.protocol && promptOf(r) === `say ${x}`);

/** What the fake answers `say <x>` with, as the run's output `answer` carries it. */
export const echoOf = (x: string) => `echo: say ${x}`;
