import type { ModelConstraint } from '../types.js';
import { LLM_INFO_LIMITS, LLM_MODEL_IDS, type LlmModelId } from './model-ids.js';

const IMAGES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/svg+xml'];
const AUDIO = ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/webm'];
const VIDEO = ['video/mp4', 'video/webm', 'video/ogg'];
const DOCUMENTS = [
  'application/pdf',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
];
const TEXT = ['text/plain', 'text/html', 'text/markdown', 'text/csv', 'text/xml', 'application/json'];

/** R1-style models write their reasoning inline between these tags, ahead of the answer. */
const THINK_TAGS = '<think>.*?</think>';

function constraint(maxTokens: number, overrides: Partial<ModelConstraint> = {}): ModelConstraint {
  const merged: ModelConstraint = {
    max_tokens: Math.min(maxTokens, LLM_INFO_LIMITS.maxTokens),
    min_temperature: 0,
    max_temperature: LLM_INFO_LIMITS.maxTemperature,
    supports_JSON_output: true,
    supports_max_tokens: true,
    supports_temperature: true,
    supported_mime_types: [],
    supports_reasoning: false,
    reasoning_separator: null,
    supports_thinking: false,
    thinking_budget_tokens: null,
    ...overrides,
  };
  merged.supported_mime_types = [...merged.supported_mime_types];
  return merged;
}

/** The most an o-series model may answer (OpenAI's published maxima), reasoning tokens included. */
function openaiReasoningOutput(model: string): number {
  if (model.startsWith('o1-preview')) return 32768;
  if (model.startsWith('o1-mini')) return 65536;
  return 100000;
}

/**
 * The most a model that takes no output cap may answer, where Spur knows it: a budget holds a
 * call's worst case by it (the listed `max_tokens` is clamped to what PySpur's editor offers).
 */
export function uncappedOutputTokens(modelId: string): number | undefined {
  const [provider, model] = modelId.split('/', 2);
  return provider === 'openai' && model && /^o\d/.test(model) ? openaiReasoningOutput(model) : undefined;
}

/** o1/o3: hidden reasoning, fixed temperature, token limit set by the provider. */
function openaiReasoning(model: string): ModelConstraint {
  const early = /^o1-(mini|preview)/.test(model);
  return constraint(openaiReasoningOutput(model), {
    supports_JSON_output: !early,
    supports_max_tokens: false,
    supports_temperature: false,
    supported_mime_types: early || model.startsWith('o3-mini') ? [] : IMAGES,
    supports_reasoning: true,
  });
}

function openai(model: string): ModelConstraint {
  if (/^o\d/.test(model)) return openaiReasoning(model);
  const search = model.includes('search-preview');
  return constraint(16384, { supports_temperature: !search, supported_mime_types: IMAGES });
}

function azure(): ModelConstraint {
  return constraint(4096);
}

function anthropic(model: string): ModelConstraint {
  if (model.startsWith('claude-3-7')) {
    return constraint(8192, {
      supported_mime_types: [...IMAGES, ...DOCUMENTS],
      supports_thinking: true,
      thinking_budget_tokens: 1024,
    });
  }
  if (model.startsWith('claude-3-5-sonnet')) {
    return constraint(8192, { supported_mime_types: [...IMAGES, ...DOCUMENTS] });
  }
  if (model.startsWith('claude-3-opus')) return constraint(4096, { supported_mime_types: IMAGES });
  return constraint(8192);
}

function gemini(): ModelConstraint {
  return constraint(8192, { supported_mime_types: [...IMAGES, ...AUDIO, ...VIDEO, ...DOCUMENTS, ...TEXT] });
}

function deepseek(model: string): ModelConstraint {
  if (model !== 'deepseek-reasoner') return constraint(8192);
  // The API returns the reasoning in its own field, so there is nothing to split off the text.
  return constraint(8192, {
    supports_JSON_output: false,
    supports_temperature: false,
    supports_reasoning: true,
  });
}

function ollama(model: string): ModelConstraint {
  if (model.startsWith('deepseek-r1')) {
    return constraint(4096, {
      supports_JSON_output: false,
      supports_reasoning: true,
      reasoning_separator: THINK_TAGS,
    });
  }
  const vision = /^gemma3:(4|12|27)b$/.test(model);
  return constraint(4096, { supported_mime_types: vision ? IMAGES : [] });
}

function xai(): ModelConstraint {
  return constraint(32768);
}

const byProvider: Record<string, (model: string) => ModelConstraint> = {
  openai,
  azure,
  anthropic,
  gemini,
  deepseek,
  ollama,
  xai,
};

function constraintsFor(id: LlmModelId): ModelConstraint {
  const slash = id.indexOf('/');
  const family = byProvider[id.slice(0, slash)];
  if (!family) throw new Error(`no constraint family for ${id}`);
  return family(id.slice(slash + 1));
}

/** Limits per model id, published on the SingleLLMCallNode entry (`model_constraints`). */
export const MODEL_CONSTRAINTS = Object.fromEntries(LLM_MODEL_IDS.map((id) => [id, constraintsFor(id)])) as Record<
  LlmModelId,
  ModelConstraint
>;
