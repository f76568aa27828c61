import { useMemo, useState } from 'preact/hooks';
import { when } from '../../format';
import { TableHead } from '../../table-head';
import { score } from './eval-format';
import type { EvalRun } from './eval-types';
import { ConsoleLink } from './console-link';
import { EvalStatusBadge } from './status-badge';
import { type Score, useRunScores } from './run-scores';

const PAGE_SIZE = 20;

function ScoreCell({ value }: { value: Score | undefined }) {
  if (value === undefined) return <>…</>;
  if (value === null) return <>no row scored yet</>;
  if ('error' in value) return <span class="error-text">{value.error}</span>;
  // The accuracy as the API answered it, for machines (and the tests); the count and percentage for people.
  return <data value={String(value.accuracy)}>{score(value)}</data>;
}

/** Eval runs, newest first as the API lists them, twenty a page, each with its score. */
export function EvalRunsTable({ runs, caption }: { runs: readonly EvalRun[]; caption: string }) {
  const [page, setPage] = useState(0);
  // Kept while the list is the same answer, so the scores are read again only when the list is.
  const shown = useMemo(() => runs.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE), [runs, page]);
  const scores = useRunScores(shown);
  return (
    <>
      <table class="eval-runs">
        <caption>
          {caption}
          {runs.length === 0 ? ': none yet' : runs.length > PAGE_SIZE ? `, page ${page + 1}` : ''}
        </caption>
        <TableHead columns={['Eval run', 'Suite', 'Workflow', 'Version', 'Status', 'Score', 'Started', 'Ended']} />
        <tbody>
          {shown.map((run) => (
            <tr data-eval-run={run.run_id}>
              <td>
                <ConsoleLink to={`/evals/runs/${encodeURIComponent(run.run_id)}`}>{run.run_id}</ConsoleLink>
              </td>
              <td>
                <ConsoleLink to={`/evals/suites/${encodeURIComponent(run.suite_id)}`}>{run.eval_name}</ConsoleLink>
              </td>
              <td>{run.workflow_id}</td>
              <td>{run.workflow_version}</td>
              <td>
                <EvalStatusBadge status={run.status} />
              </td>
              <td class="score">
                <ScoreCell value={scores.get(run.run_id)} />
              </td>
              <td>{when(run.start_time)}</td>
              <td>{when(run.end_time)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs.length > PAGE_SIZE && (
        <nav class="pager" aria-label={`Pages of ${caption.toLowerCase()}`}>
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Newer
          </button>
          <button type="button" disabled={(page + 1) * PAGE_SIZE >= runs.length} onClick={() => setPage(page + 1)}>
            Older
          </button>
        </nav>
      )}
    </>
  );
}
