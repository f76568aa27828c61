import { getEncoding } from 'js-tiktoken';

type Encoding = ReturnType<typeof getEncoding>;
let o200k: Encoding | undefined;

/**
 * A prompt's tokens as OpenAI's current models count them (o200k_base); other providers' counts
 * differ by a few percent. Loaded on first use: only workflows with a budget count prompts.
 */
export function promptTokens(text: string): number {
  o200k ??= getEncoding('o200k_base');
  return o200k.encode(text).length;
}
