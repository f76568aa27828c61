import type { UsageSum } from '../db/eval-row-runs';
import { outputSchemaFor, parseJsonReply, validateOutput } from '../nodes/ai/llm/json-output';
import { asText, choiceLetter, findNumber, normalizeText } from './answer-text';
import { boundedMatch } from '../nodes/bounded-regex';
import type { ScorerConfig } from './scorer-config';

/** What one example scored: the texts compared (after extraction) and the verdict. */
export interface Verdict {
  correct: boolean;
  /** The predicted answer as compared (a number, a letter, a match), as PySpur shows it. */
  predicted: string;
  /** The ground truth as compared. */
  expected: string;
  /** Why the verdict is what it is, when that is not plain from the texts (a judge's reason, an error). */
  note?: string;
  /** What scoring itself cost (a judge's model calls). */
  usage?: UsageSum;
}

/** One example: the workflow's output variable and the row's answer cell (and the whole row, for Python). */
export interface Example {
  output: unknown;
  answer: unknown;
  row: Record<string, unknown>;
}

/** The scorers that need the worker: a model call, the Python sandbox. */
export interface ScorerTools {
  judge(config: Extract<ScorerConfig, { type: 'llm_judge' }>, example: Example): Promise<Verdict>;
  python(config: Extract<ScorerConfig, { type: 'python' }>, example: Example): Promise<Verdict>;
}

type Local = Exclude<ScorerConfig, { type: 'llm_judge' | 'python' }>;

/** Scores one example with the suite's scorer. */
export function score(config: ScorerConfig, example: Example, tools: ScorerTools): Promise<Verdict> {
  if (config.type === 'llm_judge') return tools.judge(config, example);
  if (config.type === 'python') return tools.python(config, example);
  if (config.type === 'json_equal') return Promise.resolve(jsonEqual(example.output, example.answer));
  return Promise.resolve(scoreLocally(config, asText(example.output), asText(example.answer).trim(), example.output));
}

/**
 * Equal as JSON values: both as canonical JSON text (keys sorted at every level), so `"1"` and `1`
 * differ. Shown as texts are elsewhere: a string as it is, anything else as that JSON.
 */
function jsonEqual(output: unknown, answer: unknown): Verdict {
  const show = (value: unknown) => (typeof value === 'string' ? value : canonicalJson(value));
  const correct = output !== undefined && canonicalJson(output) === canonicalJson(answer);
  return { correct, predicted: show(output), expected: show(answer) };
}

/** JSON text with every object's keys in order; undefined (no output) as ''. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function scoreLocally(
  config: Exclude<Local, { type: 'json_equal' }>,
  output: string,
  answer: string,
  raw: unknown,
): Verdict {
  switch (config.type) {
    case 'exact':
      return { correct: output === answer, predicted: output, expected: answer };
    case 'normalized':
      return { correct: normalizeText(output) === normalizeText(answer), predicted: output, expected: answer };
    case 'numeric':
      return numeric(
        findNumber(output, config.answer_delimiter),
        findNumber(answer, config.answer_delimiter),
        config.tolerance,
      );
    case 'regex':
      return regex(config, output, answer);
    case 'choice': {
      const predicted = choiceLetter(output, config.letters) ?? '';
      const expected = choiceLetter(answer, config.letters) ?? answer.toUpperCase();
      return { correct: predicted !== '' && predicted === expected, predicted, expected };
    }
    case 'json_schema':
      return jsonSchema(config.schema, output, raw);
  }
}

function numeric(predicted: string, expected: string, tolerance: number): Verdict {
  const a = Number(predicted);
  const b = Number(expected);
  const correct =
    predicted !== '' && expected !== '' && Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= tolerance;
  return { correct, predicted, expected };
}

function regex(config: Extract<ScorerConfig, { type: 'regex' }>, output: string, answer: string): Verdict {
  const found = boundedMatch(config.pattern, config.flags, output);
  if (!found.ok) return { correct: false, predicted: '', expected: answer, note: found.reason };
  let expected = answer;
  if (config.apply_to_answer) {
    const inAnswer = boundedMatch(config.pattern, config.flags, answer);
    if (!inAnswer.ok) return { correct: false, predicted: found.value ?? '', expected: answer, note: inAnswer.reason };
    expected = inAnswer.value ?? answer;
  }
  const predicted = (found.value ?? '').trim();
  return {
    correct: found.value !== null && predicted.toLowerCase() === expected.trim().toLowerCase(),
    predicted,
    expected,
  };
}

function jsonSchema(schema: Record<string, unknown>, output: string, raw: unknown): Verdict {
  const value = typeof raw === 'string' ? parseJsonReply(raw) : { ok: true as const, value: raw };
  if (!value.ok) return { correct: false, predicted: output, expected: 'valid JSON', note: 'the output holds no JSON' };
  const compiled = outputSchemaFor(JSON.stringify(schema));
  const checked = validateOutput(value.value, compiled);
  if (!checked.ok)
    return {
      correct: false,
      predicted: output,
      expected: 'matches the schema',
      note: `the schema could not be checked: ${checked.reason}`,
    };
  const correct = checked.valid;
  const note = correct
    ? undefined
    : (compiled.validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
  return { correct, predicted: output, expected: 'matches the schema', ...(note ? { note } : {}) };
}
