import { NodeExecutionError } from './errors';
import { HTTP_KEY_BASES } from './integrations/http-request/http-credential-names';
import { INTEGRATION_KEY_BASES } from './integrations/http/services';
import { MCP_KEY_BASES } from './mcp/mcp-credential-names';

/** The base URL setting each LLM key is sent to (embeddings of the same providers use the same pairs). */
const LLM_KEY_BASES: Readonly<Record<string, readonly string[]>> = {
  OPENAI_API_KEY: ['OPENAI_API_BASE'],
  ANTHROPIC_API_KEY: ['ANTHROPIC_API_BASE'],
  GEMINI_API_KEY: ['GEMINI_API_BASE'],
  DEEPSEEK_API_KEY: ['DEEPSEEK_API_BASE'],
  XAI_API_KEY: ['XAI_API_BASE'],
  AZURE_OPENAI_API_KEY: ['AZURE_OPENAI_ENDPOINT'],
};

/**
 * Keys follow their base: a credential is sent to the host its base URL setting names, and any
 * API caller may change that setting. So each credential remembers the base values it was entered
 * under, and reads as unset once one of them differs: re-entering it is what sends it to a new host.
 */
export const KEY_BASES: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({ ...LLM_KEY_BASES, ...INTEGRATION_KEY_BASES, ...MCP_KEY_BASES, ...HTTP_KEY_BASES }),
);

/** A base value as compared: trimmed, without trailing slashes; unset is ''. */
export function normalizedBase(value: string | undefined): string {
  return (value ?? '').trim().replace(/\/+$/, '');
}

/** What a credential records of its bases: one text, so stored and current compare as strings. */
export function basesText(bases: readonly string[], valueOf: (name: string) => string): string {
  return JSON.stringify(bases.map((name) => [name, valueOf(name)]));
}

/** A setting a node cannot run without, trimmed; its absence fails the node (retrying cannot help). */
export async function settingOrFail(
  read: (name: string) => Promise<string | undefined>,
  name: string,
): Promise<string> {
  const value = (await read(name))?.trim();
  if (!value) throw settingNotSet(name);
  return value;
}

/** A setting a node cannot run without is unset (or, for a credential, entered under another base). */
export function settingNotSet(name: string): NodeExecutionError {
  const bases = KEY_BASES.get(name);
  const hint = bases
    ? ` (a credential is used only with the ${bases.join(' and ')} it was entered under: after changing that, enter ${name} again)`
    : '';
  return new NodeExecutionError(`${name} is not set; add it in the environment settings${hint}`);
}
