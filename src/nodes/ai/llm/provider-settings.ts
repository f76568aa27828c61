import { settingOrFail } from '../../credential-bases.js';
import type { SecretReader } from './types.js';
import type { OutboundFetch } from '../../../outbound/outbound-fetch';

/**
 * Base-URL overrides the LLM adapters read (besides AZURE_OPENAI_ENDPOINT, which is the Azure
 * provider's own setting). They point a provider at a proxy, a self-hosted gateway or, in tests,
 * a local fake server.
 */
export const LLM_BASE_URL_VARIABLES = [
  'OPENAI_API_BASE',
  'ANTHROPIC_API_BASE',
  'GEMINI_API_BASE',
  'DEEPSEEK_API_BASE',
  'OLLAMA_BASE_URL',
  'XAI_API_BASE',
] as const;
export type LlmBaseUrlVariable = (typeof LLM_BASE_URL_VARIABLES)[number];

/**
 * Upper bound for one provider request. Temporal retries it (a timeout is transient), so it only
 * has to stay below the activity's start-to-close timeout (300 s by default).
 */
export const DEFAULT_LLM_TIMEOUT_MS = 280_000;

/**
 * What every adapter factory gets: the node's secret reader and its request timeout. The SDKs'
 * own retries stay off (`maxRetries: 0`): Temporal retries the whole activity with backoff.
 */
export interface AdapterOptions {
  secret: SecretReader;
  timeoutMs: number;
  /** The installation's outbound client: the SDKs send every request through it. */
  fetch: OutboundFetch;
}

/** A setting that must be present; its absence fails the node (retrying cannot help). */
export async function requiredSetting(secret: SecretReader, name: string): Promise<string> {
  return settingOrFail(secret, name);
}

/** A base-URL override, else the provider's default. Never read from process.env by the SDKs. */
export async function baseUrlSetting(
  secret: SecretReader,
  name: LlmBaseUrlVariable,
  fallback: string,
): Promise<string> {
  const value = (await secret(name))?.trim();
  return value ? value : fallback;
}
