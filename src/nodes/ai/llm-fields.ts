import { z } from 'zod';
import { MAX_FALLBACK_MODELS } from '../../engine/model-fallbacks.js';
import { DEFAULT_LLM_MODEL, LLM_INFO_LIMITS, LLM_MODEL_IDS } from './model-ids.js';

/** Beyond PySpur: models tried in turn when the model's call fails for good (src/engine/model-fallbacks.ts). */
export const fallbackModelsSchema = z.array(z.enum(LLM_MODEL_IDS)).max(MAX_FALLBACK_MODELS);

/** `llm_info`: which model and sampling settings. `max_tokens` is required once the object is given. */
export const llmInfoSchema = z.looseObject({
  model: z.enum(LLM_MODEL_IDS).default(DEFAULT_LLM_MODEL),
  max_tokens: z.number().int().min(1).max(LLM_INFO_LIMITS.maxTokens),
  temperature: z.number().min(0).max(LLM_INFO_LIMITS.maxTemperature).default(0.7),
  top_p: z.number().min(0).max(1).default(0.9),
  fallback_models: fallbackModelsSchema.optional(),
});

export const fewShotExampleSchema = z.looseObject({ input: z.string(), output: z.string() });

/** Config fields shared by SingleLLMCall, Agent and BestOfN, in PySpur's order. */
export function llmCallShape() {
  return {
    llm_info: llmInfoSchema.default(() => ({
      model: DEFAULT_LLM_MODEL,
      max_tokens: 16384,
      temperature: 0.7,
      top_p: 0.9,
    })),
    system_message: z.string().default('You are a helpful assistant.'),
    user_message: z.string().default(''),
    few_shot_examples: z.array(fewShotExampleSchema).nullish(),
    url_variables: z.record(z.string(), z.string()).nullish(),
    enable_thinking: z.boolean().default(false),
    thinking_budget_tokens: z.number().int().min(1).nullish(),
    enable_message_history: z.boolean().default(false),
    message_history_variable: z.string().nullish(),
  };
}
