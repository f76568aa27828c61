import { useMemo } from 'preact/hooks';
import { when } from '../../format';
import { Status, useApi } from '../../loading';
import type { EvalRun, Suite } from './eval-types';
import { EvalRunsTable } from './eval-runs-table';

/** A scorer's settings beyond its type (a pattern, a rubric, Python code), as the API holds them. */
function scorerSettings(scorer: Suite['scorer']): string | null {
  const settings = Object.entries(scorer).filter(([key]) => key !== 'type');
  return settings.length === 0 ? null : JSON.stringify(Object.fromEntries(settings), null, 2);
}

/** /console/evals/suites/{id}: what a suite is made of (GET /api/evals/suites/{id}/) and its eval runs. */
export function SuitePage({ suiteId }: { suiteId: string }) {
  const { data: suite, error } = useApi<Suite>(`/evals/suites/${encodeURIComponent(suiteId)}/`);
  const runs = useApi<EvalRun[]>('/evals/runs/');
  const ofSuite = useMemo(() => runs.data?.filter((r) => r.suite_id === suite?.id) ?? [], [runs.data, suite]);

  if (!suite) return <Status error={error} loading />;
  const settings = scorerSettings(suite.scorer);
  return (
    <section aria-labelledby="suite-title">
      <h1 id="suite-title">Suite {suite.name}</h1>
      {suite.description && <p class="plain-text">{suite.description}</p>}
      <dl class="facts">
        <dt>Id</dt>
        <dd>{suite.id}</dd>
        <dt>Type</dt>
        <dd>{suite.type}</dd>
        <dt>Dataset</dt>
        <dd>{suite.dataset_id}</dd>
        <dt>Rows</dt>
        <dd>{suite.num_samples}</dd>
        <dt>Answer column</dt>
        <dd>{suite.answer_column}</dd>
        <dt>Input columns shown</dt>
        <dd>{suite.input_columns.length > 0 ? suite.input_columns.join(', ') : 'every column but the answer'}</dd>
        <dt>Scorer</dt>
        <dd>
          {suite.scorer.type}
          {settings && <pre class="plain-text">{settings}</pre>}
        </dd>
        <dt>Pauses in its evals</dt>
        <dd>{suite.pauses === 'approve' ? 'approved' : 'declined'} without asking anyone</dd>
        <dt>Node types acting for real</dt>
        <dd>{suite.live_node_types.length > 0 ? suite.live_node_types.join(', ') : 'none: every row is a dry run'}</dd>
        {suite.source_run_column && (
          <>
            <dt>Made from runs</dt>
            <dd>each row's run in column {suite.source_run_column}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{when(suite.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{when(suite.updated_at)}</dd>
      </dl>
      <h2>Eval runs of this suite</h2>
      <Status error={runs.error} loading={runs.data === null} />
      {runs.data && <EvalRunsTable runs={ofSuite} caption={`Eval runs of ${suite.name}`} />}
    </section>
  );
}
