import { retryAfterMs } from '../outbound/retry-after';
import type OpenAI from 'openai';
import { EMBEDDING_PROVIDERS, type EmbeddingModelInfo, remoteModelName } from './embedding-models';
import { outboundStop } from '../outbound/errors';
import type { OutboundFetch } from '../outbound/outbound-fetch';

export type SecretReader = (name: string) => Promise<string | undefined>;

/** What an embedding request needs: the provider settings and the installation's outbound client. */
export interface EmbeddingAccess {
  secret: SecretReader;
  fetch: OutboundFetch;
}

/** A failed embedding request; `retryable` says whether trying again later can help. */
export class EmbeddingError extends Error {
  override name = 'EmbeddingError';
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The provider's Retry-After, when it gave one: the next attempt waits that long. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

const REQUEST_TIMEOUT_MS = 120_000;

/**
 * The OpenAI SDK, loaded on the first embedding request: a tenth of a second of every api's and
 * worker's start-up otherwise, which most processes never need. `require`, as the LLM adapters do
 * (src/nodes/ai/llm/adapters.ts).
 */
const openAiSdk = () => require('openai') as typeof import('openai');

async function setting(secret: SecretReader, name: string): Promise<string | undefined> {
  const value = (await secret(name))?.trim();
  return value ? value : undefined;
}

/** Which of the model's required settings are missing (empty: the model is usable now). */
export async function missingSettings(secret: SecretReader, model: EmbeddingModelInfo): Promise<string[]> {
  const missing: string[] = [];
  for (const name of EMBEDDING_PROVIDERS[model.provider].required)
    if (!(await setting(secret, name))) missing.push(name);
  return missing;
}

async function clientFor({ secret, fetch }: EmbeddingAccess, model: EmbeddingModelInfo): Promise<OpenAI> {
  const missing = await missingSettings(secret, model);
  if (missing.length)
    throw new EmbeddingError(
      `${missing.join(', ')} not set; add it in the environment settings to use ${model.id}`,
      false,
    );
  const access = EMBEDDING_PROVIDERS[model.provider];
  const common = { maxRetries: 0, timeout: REQUEST_TIMEOUT_MS, organization: null, project: null, fetch };
  if (model.provider === 'AzureOpenAI') {
    const endpoint = (await setting(secret, 'AZURE_OPENAI_ENDPOINT')) as string;
    return new (openAiSdk().AzureOpenAI)({
      ...common,
      apiKey: await setting(secret, 'AZURE_OPENAI_API_KEY'),
      apiVersion: await setting(secret, 'AZURE_OPENAI_API_VERSION'),
      deployment: remoteModelName(model.id),
      // Built here so the SDK never falls back to AZURE_OPENAI_ENDPOINT from process.env.
      baseURL: `${endpoint.replace(/\/+$/, '')}/openai`,
    });
  }
  let baseURL = (access.baseUrlVariable && (await setting(secret, access.baseUrlVariable))) || access.defaultBaseUrl;
  if (model.provider === 'Ollama') baseURL = `${baseURL.replace(/\/+$/, '')}/v1`;
  // Ollama needs no key, but the SDK refuses to start without one; Ollama ignores it.
  const apiKey = access.required[0] ? await setting(secret, access.required[0]) : 'ollama';
  return new (openAiSdk().OpenAI)({ ...common, apiKey, baseURL });
}

/** 429, 408, 409 and 5xx (and no answer at all) are worth retrying; other answers are final. */
function classify(err: unknown, model: EmbeddingModelInfo): EmbeddingError {
  if (err instanceof EmbeddingError) return err;
  const stop = outboundStop(err);
  if (stop)
    return new EmbeddingError(
      `${model.provider} embeddings request stopped by the outbound policy: ${stop.message}`,
      false,
    );
  if (err instanceof openAiSdk().APIError && typeof err.status === 'number') {
    const retryable = err.status === 429 || err.status === 408 || err.status === 409 || err.status >= 500;
    return new EmbeddingError(
      `${model.provider} embeddings answered ${err.status}: ${err.message}`,
      retryable,
      retryable ? retryAfterMs(err.headers) : undefined,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new EmbeddingError(`${model.provider} embeddings request failed: ${message}`, true);
}

/**
 * Embeds `texts` in one request and checks the answer: one vector per text, each of the index's
 * dimensions (a model that answers with other dimensions fails the job, saying so).
 */
export async function embedTexts(
  providerAccess: EmbeddingAccess,
  model: EmbeddingModelInfo,
  texts: string[],
  dimensions: number,
  signal?: AbortSignal,
): Promise<number[][]> {
  const access = EMBEDDING_PROVIDERS[model.provider];
  try {
    const client = await clientFor(providerAccess, model);
    const input = texts.map((t) => t.slice(0, model.max_input_length * 4));
    const response = await client.embeddings.create(
      {
        model: remoteModelName(model.id),
        input,
        // Left out, the SDK asks for base64 and decodes it; floats are asked for by name.
        ...(access.encodingFormat === 'float' ? { encoding_format: 'float' as const } : {}),
        ...(access.sendsDimensions ? { dimensions } : {}),
      },
      signal ? { signal } : undefined,
    );
    const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding as unknown as number[]);
    if (vectors.length !== texts.length)
      throw new EmbeddingError(`${model.id} returned ${vectors.length} vectors for ${texts.length} texts`, false);
    for (const v of vectors) {
      if (!Array.isArray(v) || v.length !== dimensions) {
        throw new EmbeddingError(
          `${model.id} returned ${Array.isArray(v) ? v.length : 0}-dimensional vectors; the index expects ${dimensions}`,
          false,
        );
      }
    }
    return vectors;
  } catch (err) {
    throw classify(err, model);
  }
}
