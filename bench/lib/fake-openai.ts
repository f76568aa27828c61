import type { JsonClient } from './http';

/** Points the stack's OpenAI settings (base URL, key) at a local fake provider, through env management. */
export async function useFakeOpenAi(api: JsonClient, fakeUrl: string): Promise<void> {
  for (const [name, value] of [
    ['OPENAI_API_BASE', `${fakeUrl}/v1`],
    ['OPENAI_API_KEY', 'sk-bench'],
  ]) {
    const res = await api.post('/env-mgmt/', { name, value });
    if (res.status !== 200) throw new Error(`env-mgmt ${name}: ${res.status}`);
  }
}
