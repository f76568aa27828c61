import { LLM_MODEL_IDS } from '../nodes/ai/model-ids';
import { outputSchemaFor } from '../nodes/ai/llm/json-output';
import { z } from '../zod';

/** Longest regex pattern a suite may hold: patterns are user input, run against model output. */
export const MAX_PATTERN_CHARS = 500;
/** Longest Python scorer body and judge rubric a suite may hold. */
export const MAX_CODE_CHARS = 20_000;

const Exact = z.object({ type: z.literal('exact') }).openapi({ description: 'The text equals the answer' });
const JsonEqual = z.object({ type: z.literal('json_equal') }).openapi({
  description:
    'The output equals the answer as JSON values (objects compared key by key, whatever the order); a suite made from runs scores so by default',
});
const Normalized = z.object({ type: z.literal('normalized') }).openapi({
  description: 'Equal after lower-casing, dropping punctuation and collapsing whitespace',
});
const Numeric = z
  .object({
    type: z.literal('numeric'),
    tolerance: z.number().min(0).max(1e12).default(1e-6),
    answer_delimiter: z.string().max(100).default('The answer is'),
  })
  .openapi({
    description:
      'The number after the delimiter (else the last number) in each text, commas dropped, equal within the absolute tolerance',
  });

function compiles(pattern: string, flags: string): boolean {
  try {
    new RegExp(pattern, flags);
    return true;
  } catch {
    return false;
  }
}

const Regex = z
  .object({
    type: z.literal('regex'),
    pattern: z.string().min(1).max(MAX_PATTERN_CHARS),
    flags: z
      .string()
      .regex(/^[imsu]*$/, 'only the flags i, m, s and u')
      .default('i'),
    /** Extract from the ground truth too (else it is compared as it is, trimmed). */
    apply_to_answer: z.boolean().default(false),
  })
  .superRefine((r, ctx) => {
    if (!compiles(r.pattern, r.flags))
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'not a regular expression' });
  })
  .openapi({
    description:
      'The first capture group (else the whole match) of the pattern in the output, compared case-insensitively with the answer',
  });
const Choice = z
  .object({
    type: z.literal('choice'),
    letters: z
      .string()
      .regex(/^[A-Z]{2,26}$/)
      .default('ABCD'),
  })
  .openapi({ description: "The multiple-choice letter of the output ('Answer: C', '(C)', 'C') equals the answer's" });
function schemaProblem(schema: Record<string, unknown>): string | null {
  try {
    outputSchemaFor(JSON.stringify(schema));
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const JsonSchema = z
  .object({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
  .superRefine((r, ctx) => {
    const problem = schemaProblem(r.schema);
    if (problem) ctx.addIssue({ code: 'custom', path: ['schema'], message: problem });
  })
  .openapi({ description: 'The output (or the JSON in it) validates against the JSON Schema; the answer is not read' });
const LlmJudge = z
  .object({
    type: z.literal('llm_judge'),
    model: z.enum(LLM_MODEL_IDS).default('openai/gpt-4o-mini'),
    rubric: z
      .string()
      .max(MAX_CODE_CHARS)
      .default('The answer is correct when it states the same result as the reference answer; wording may differ.'),
  })
  .openapi({ description: 'A model judges the output against the reference with the rubric (its usage is recorded)' });
const Python = z.object({ type: z.literal('python'), code: z.string().min(1).max(MAX_CODE_CHARS) }).openapi({
  description:
    'Body of a function of `input_model` (fields predicted, expected, row) returning {"correct": bool}, run in the Python sandbox',
});

export const ScorerConfig = z
  .discriminatedUnion('type', [Exact, JsonEqual, Normalized, Numeric, Regex, Choice, JsonSchema, LlmJudge, Python])
  .openapi('EvalScorer');
export type ScorerConfig = z.output<typeof ScorerConfig>;
export type ScorerType = ScorerConfig['type'];
