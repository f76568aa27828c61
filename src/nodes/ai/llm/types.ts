/** The provider-neutral chat-completion interface every LLM adapter implements. */

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ChatCompletionRequest {
  /** The provider's own model name (the part after `openai/`, `anthropic/`, …). */
  model: string;
  messages: ChatMessage[];
  /** Omitted for models whose API rejects a token limit (OpenAI o-series). */
  maxTokens?: number;
  /** Omitted for models with a fixed temperature (reasoning models). */
  temperature?: number;
  topP?: number;
  /** When given, the adapter asks the provider for JSON output in its own way. */
  jsonSchema?: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface ChatCompletionResult {
  text: string;
}

export interface LlmAdapter {
  chatCompletion(request: ChatCompletionRequest): Promise<ChatCompletionResult>;
}

/** Reads a provider setting (key or base URL) from env management; `ctx.secret` of a node. */
export type SecretReader = (name: string) => Promise<string | undefined>;
