import { type Engine, startEngine } from './engine';
import { type FakeLlmServer, startFakeLlmServer } from './fake-llm-server';

/**
 * Provider settings that point OpenAI and Anthropic models at the fake server, bases first: a key
 * is used only with the base it was entered under.
 */
export function fakeProviderSettings(fake: FakeLlmServer): Record<string, string> {
  return {
    OPENAI_API_BASE: `${fake.url}/v1`,
    OPENAI_API_KEY: 'sk-test',
    ANTHROPIC_API_BASE: fake.url,
    ANTHROPIC_API_KEY: 'sk-ant-test',
  };
}

/** An engine (the api hosting its worker) whose OpenAI and Anthropic models talk to a fresh fake provider server. */
export async function startLlmEngine(
  overrides: Record<string, string> = {},
): Promise<{ engine: Engine; fake: FakeLlmServer }> {
  const engine = await startEngine(overrides);
  return { engine, fake: await attachFakeLlm(engine) };
}

/** Starts a fake provider server and points the engine's OpenAI and Anthropic settings at it. */
export async function attachFakeLlm(engine: Engine): Promise<FakeLlmServer> {
  const fake = await startFakeLlmServer();
  for (const [name, value] of Object.entries(fakeProviderSettings(fake))) {
    const res = await engine.http.post('/env-mgmt/', { name, value });
    if (res.status !== 200) throw new Error(`setting ${name}: ${res.status} ${res.text}`);
  }
  return fake;
}
