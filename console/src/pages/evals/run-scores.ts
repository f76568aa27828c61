import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api';
import { messageOf } from '../../loading';
import { type EvalRun, type Tally, isOpen } from './eval-types';

/** A run's score as the list shows it: its tally, null while no row is scored, or the API's message. */
export type Score = Tally | null | { error: string };

/**
 * The scores of the listed runs. GET /api/evals/runs/ answers no results, so each run listed is
 * read on its own (GET /api/evals/runs/{id}); an ended run's score cannot change and is read once.
 */
export function useRunScores(runs: readonly EvalRun[]): ReadonlyMap<string, Score> {
  const [scores, setScores] = useState<ReadonlyMap<string, Score>>(new Map());
  const ended = useRef(new Map<string, Score>());
  useEffect(() => {
    let current = true;
    const wanted = runs.filter((r) => isOpen(r.status) || !ended.current.has(r.run_id));
    void Promise.all(
      wanted.map(async (r): Promise<[EvalRun, Score]> => {
        try {
          const full = await api<EvalRun>(`/evals/runs/${encodeURIComponent(r.run_id)}`);
          return [full, full.results ?? null];
        } catch (err) {
          return [r, { error: messageOf(err) }];
        }
      }),
    ).then((read) => {
      for (const [run, score] of read)
        if (!isOpen(run.status) && !(score && 'error' in score)) ended.current.set(run.run_id, score);
      if (!current) return;
      const next = new Map(ended.current);
      for (const [run, score] of read) next.set(run.run_id, score);
      setScores(next);
    });
    return () => {
      current = false;
    };
  }, [runs]);
  return scores;
}
