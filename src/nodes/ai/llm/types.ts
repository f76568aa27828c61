/** The provider-neutral chat-completion interface every LLM adapter implements. */

export type ChatRole = 'system' | 'user' | 'assistant';

/** A piece of a user message: text, or a file's bytes (base64) with its media type. */
export type ContentPart =
  { type: 'text'; text: string } | { type: 'file'; mimeType: string; base64: string; name?: string };

/** A function call the model asked for; `arguments` is the JSON text the model wrote. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A function offered to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

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
  /** Functions the model may call (`tool_choice: auto`). */
  tools?: ToolSpec[];
  /** Extended thinking with this budget (Anthropic). */
  thinkingBudgetTokens?: number;
  signal?: AbortSignal;
  /**
   * Given: the adapter streams the reply where it can (a plain completion, no tools) and calls
   * this with each piece of text as it arrives; the result is the same as without it.
   */
  onText?: (text: string) => void;
}

/** Tokens a call used, as the provider reported them. */
export interface TokenUsage {
  /** Every prompt token, those read from or written to the provider's prompt cache included. */
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of prompt_tokens: read from the provider's prompt cache (billed at the cached rate). */
  cached_tokens?: number;
  /** Of prompt_tokens: written to the provider's prompt cache (Anthropic bills these higher). */
  cache_write_tokens?: number;
}

export interface ChatCompletionResult {
  text: string;
  toolCalls?: ToolCall[];
  usage?: TokenUsage;
}

export interface LlmAdapter {
  chatCompletion(request: ChatCompletionRequest): Promise<ChatCompletionResult>;
}

/** Reads a provider setting (key or base URL) from env management; `ctx.secret` of a node. */
export type SecretReader = (name: string) => Promise<string | undefined>;
