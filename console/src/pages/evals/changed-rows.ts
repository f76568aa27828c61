import type { Example } from './eval-types';

/** How a row changed from version A to B: right only with B, right only with A, or another answer scored the same. */
export type Change = 'better' | 'worse' | 'answer';

export interface ChangedRow {
  example_id: number;
  prompt: string;
  expected: string;
  a: Pick<Example, 'predicted_answer' | 'is_correct'>;
  b: Pick<Example, 'predicted_answer' | 'is_correct'>;
  change: Change;
}

/**
 * The rows both runs scored whose answer or score differs, in row order. The API's `differences`
 * hold only the rows whose score flipped; a reviewer of a new version also wants the rows it
 * answers differently yet scores the same (two wrong answers, two right ones in other words).
 */
export function changedRows(a: readonly Example[], b: readonly Example[]): ChangedRow[] {
  const ofB = new Map(b.map((e) => [e.example_id, e]));
  const changed: ChangedRow[] = [];
  for (const ea of a) {
    const eb = ofB.get(ea.example_id);
    if (!eb || (ea.is_correct === eb.is_correct && ea.predicted_answer === eb.predicted_answer)) continue;
    changed.push({
      example_id: ea.example_id,
      prompt: ea.prompt,
      expected: ea.ground_truth_answer,
      a: { predicted_answer: ea.predicted_answer, is_correct: ea.is_correct },
      b: { predicted_answer: eb.predicted_answer, is_correct: eb.is_correct },
      change: ea.is_correct === eb.is_correct ? 'answer' : eb.is_correct ? 'better' : 'worse',
    });
  }
  return changed.sort((x, y) => x.example_id - y.example_id);
}
