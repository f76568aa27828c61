import { useMemo } from 'preact/hooks';
import { Status, useApi } from '../../loading';
import { changedRows } from './changed-rows';
import { ChangedRowsTable } from './changed-rows-table';
import { ConsoleLink } from './console-link';
import { DeltaSummary } from './delta-summary';
import { type Comparison, type EvalRun, isOpen } from './eval-types';
import { useRefreshWhile } from './refresh-while';
import { EvalStatusBadge } from './status-badge';

const runPath = (run: EvalRun | undefined) => (run ? `/evals/runs/${encodeURIComponent(run.run_id)}` : null);
const examplesOf = (run: EvalRun | null) => run?.results?.subset_metrics.default.per_example_results ?? [];

/**
 * /console/evals/compare/{id}: two versions on the same rows (GET /api/evals/compare/{id}/) and the
 * rows that changed, read from both eval runs (the comparison lists only the rows whose score
 * flipped); read again while its runs go on.
 */
export function ComparisonPage({ comparisonId }: { comparisonId: string }) {
  const comparison = useApi<Comparison>(`/evals/compare/${encodeURIComponent(comparisonId)}/`);
  const c = comparison.data;
  const runA = useApi<EvalRun>(runPath(c?.runs[0]));
  const runB = useApi<EvalRun>(runPath(c?.runs[1]));
  // The comparison first: once it has ended, the runs read after it have too.
  useRefreshWhile(c ? isOpen(c.status) : false, async () => {
    await comparison.reload();
    await Promise.all([runA.reload(), runB.reload()]);
  });
  const changed = useMemo(() => changedRows(examplesOf(runA.data), examplesOf(runB.data)), [runA.data, runB.data]);

  if (!c) return <Status error={comparison.error} loading />;
  return (
    <section aria-labelledby="comparison-title">
      <h1 id="comparison-title">
        Comparison {c.id} <EvalStatusBadge status={c.status} />
      </h1>
      <dl class="facts">
        <dt>Suite</dt>
        <dd>
          <ConsoleLink to={`/evals/suites/${encodeURIComponent(c.suite_id)}`}>{c.runs[0].eval_name}</ConsoleLink>
        </dd>
        <dt>Workflow</dt>
        <dd>
          {c.workflow_id}: version {c.versions[0]} (A) against version {c.versions[1]} (B)
        </dd>
      </dl>
      <Status error={comparison.error} />
      <DeltaSummary comparison={c} />
      <h2>Changed rows</h2>
      <Status error={runA.error ?? runB.error} loading={runA.data === null || runB.data === null} />
      {runA.data && runB.data && <ChangedRowsTable rows={changed} />}
    </section>
  );
}
