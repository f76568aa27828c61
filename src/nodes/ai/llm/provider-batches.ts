import type Anthropic from '@anthropic-ai/sdk';
import type { BatchAnswer, BatchLine, BatchProvider } from '../../../engine/provider-batch-plan';
import { openAiClientOptions } from './openai-chat.js';
import { type AdapterOptions, baseUrlSetting, requiredSetting } from './provider-settings.js';

export interface ProviderBatchState {
  /** The provider's own word (`validating`, `in_progress`, `ended`, ...). */
  status: string;
  ended: boolean;
  counts: { total: number; succeeded: number; failed: number };
}

/** A provider's batch API, as a provider-batch run uses it. */
export interface ProviderBatchApi {
  /**
   * The batch made for `key` by an earlier try of the create (one that ended before its answer was
   * stored), if the provider can tell: created at or after `since`, of `size` requests.
   */
  find(key: string, since: Date, size: number): Promise<string | null>;
  create(key: string, lines: BatchLine[]): Promise<string>;
  state(id: string): Promise<ProviderBatchState>;
  /**
   * Every answer by custom id (a request the provider never answered, an expiry, is absent or an
   * error), and why the whole batch failed, if it did.
   */
  answers(id: string): Promise<{ answers: Map<string, BatchAnswer>; failure: string | null }>;
}

/** How far back an earlier try's batch may have been created (clocks of two hosts differ). */
const FIND_SKEW_MS = 60_000;
/** Batches looked through for an earlier try's, newest first. */
const FIND_AT_MOST = 1000;

const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** The batch API of a provider, with the settings its LLM calls use (key, base URL) and the outbound client. */
export async function providerBatchApi(provider: BatchProvider, options: AdapterOptions): Promise<ProviderBatchApi> {
  return provider === 'openai' ? openAiBatches(options) : anthropicBatches(options);
}

async function openAiBatches(options: AdapterOptions): Promise<ProviderBatchApi> {
  const apiKey = await requiredSetting(options.secret, 'OPENAI_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'OPENAI_API_BASE', 'https://api.openai.com/v1');
  // Loaded on first use, as the adapters load theirs (adapters.ts).
  const { default: OpenAI, toFile } = require('openai') as typeof import('openai');
  const client = new OpenAI(openAiClientOptions(apiKey, baseURL, options));
  return {
    async find(key, since) {
      let seen = 0;
      // OpenAI keeps a batch's metadata: the key finds it whatever its size.
      for await (const batch of client.batches.list({ limit: 100 })) {
        if (batch.metadata?.spur_key === key) return batch.id;
        if (++seen >= FIND_AT_MOST || batch.created_at * 1000 < since.getTime() - FIND_SKEW_MS) return null;
      }
      return null;
    },
    async create(key, lines) {
      const jsonl = lines
        .map((l) =>
          JSON.stringify({ custom_id: l.custom_id, method: 'POST', url: '/v1/chat/completions', body: l.body }),
        )
        .join('\n');
      const file = await client.files.create({
        file: await toFile(Buffer.from(jsonl, 'utf8'), 'spur-batch.jsonl', { type: 'application/jsonl' }),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { spur_key: key },
      });
      return batch.id;
    },
    async state(id) {
      const batch = await client.batches.retrieve(id);
      const counts = batch.request_counts;
      return {
        status: batch.status,
        ended: OPENAI_ENDED.has(batch.status),
        counts: { total: counts?.total ?? 0, succeeded: counts?.completed ?? 0, failed: counts?.failed ?? 0 },
      };
    },
    async answers(id) {
      const batch = await client.batches.retrieve(id);
      const answers = new Map<string, BatchAnswer>();
      for (const fileId of [batch.output_file_id, batch.error_file_id]) {
        if (!fileId) continue;
        const text = await (await client.files.content(fileId)).text();
        for (const line of text.split('\n')) if (line.trim()) addOpenAiLine(answers, JSON.parse(line) as OpenAiLine);
      }
      const failure = batch.errors?.data?.[0]?.message;
      return { answers, failure: failure ? `The provider batch failed: ${failure}` : null };
    },
  };
}

interface OpenAiLine {
  custom_id?: string;
  response?: { status_code?: number; body?: { error?: { message?: string } } } | null;
  error?: { code?: string; message?: string } | null;
}

function addOpenAiLine(answers: Map<string, BatchAnswer>, line: OpenAiLine): void {
  if (typeof line.custom_id !== 'string') return;
  const status = line.response?.status_code;
  if (status === 200 && !line.error) answers.set(line.custom_id, { ok: true, body: line.response?.body });
  else
    answers.set(line.custom_id, {
      ok: false,
      error:
        line.error?.message ?? line.response?.body?.error?.message ?? `The provider answered ${status ?? 'nothing'}`,
    });
}

async function anthropicBatches(options: AdapterOptions): Promise<ProviderBatchApi> {
  const apiKey = await requiredSetting(options.secret, 'ANTHROPIC_API_KEY');
  const baseURL = await baseUrlSetting(options.secret, 'ANTHROPIC_API_BASE', 'https://api.anthropic.com');
  const { default: AnthropicClient } = require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk');
  const client = new AnthropicClient({
    apiKey,
    baseURL,
    maxRetries: 0,
    timeout: options.timeoutMs,
    fetch: options.fetch,
  });
  return {
    async find(_key, since, size) {
      // Message Batches keep no metadata: an earlier try's batch is the one created since then with as many requests.
      let seen = 0;
      for await (const batch of client.messages.batches.list({ limit: 100 })) {
        const created = Date.parse(batch.created_at);
        if (created < since.getTime() - FIND_SKEW_MS || ++seen >= FIND_AT_MOST) return null;
        const c = batch.request_counts;
        if (c.processing + c.succeeded + c.errored + c.canceled + c.expired === size) return batch.id;
      }
      return null;
    },
    async create(_key, lines) {
      const batch = await client.messages.batches.create({
        requests: lines.map((l) => ({
          custom_id: l.custom_id,
          params: l.body as unknown as Anthropic.Messages.MessageCreateParamsNonStreaming,
        })),
      });
      return batch.id;
    },
    async state(id) {
      const batch = await client.messages.batches.retrieve(id);
      const c = batch.request_counts;
      return {
        status: batch.processing_status,
        ended: batch.processing_status === 'ended',
        counts: {
          total: c.processing + c.succeeded + c.errored + c.canceled + c.expired,
          succeeded: c.succeeded,
          failed: c.errored + c.canceled + c.expired,
        },
      };
    },
    async answers(id) {
      const answers = new Map<string, BatchAnswer>();
      for await (const line of await client.messages.batches.results(id)) {
        const r = line.result;
        if (r.type === 'succeeded') answers.set(line.custom_id, { ok: true, body: r.message });
        else if (r.type === 'errored') answers.set(line.custom_id, { ok: false, error: r.error.error.message });
        else answers.set(line.custom_id, { ok: false, error: `The provider batch request ${r.type}` });
      }
      return { answers, failure: null };
    },
  };
}
