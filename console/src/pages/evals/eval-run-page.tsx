import { api } from '../../api';
import { usd, when } from '../../format';
import { Status, useAction, useApi } from '../../loading';
import { useCan } from '../../session';
import { ConsoleLink } from './console-link';
import { score } from './eval-format';
import { type EvalRun, isOpen } from './eval-types';
import { ExamplesTable } from './examples-table';
import { useRefreshWhile } from './refresh-while';
import { EvalStatusBadge } from './status-badge';
import { WouldBeRequests } from './would-be-requests';

/**
 * /console/evals/runs/{id}: an eval run's score and its rows (GET /api/evals/runs/{id}), read again
 * while it runs; a role holding `build` may cancel it (the rows that ended keep their scores).
 */
export function EvalRunPage({ runId }: { runId: string }) {
  const path = `/evals/runs/${encodeURIComponent(runId)}`;
  const { data: run, error, reload } = useApi<EvalRun>(path);
  const canBuild = useCan('build');
  const action = useAction();
  useRefreshWhile(run ? isOpen(run.status) : false, reload);

  const cancel = () =>
    action.act(async () => {
      await api<EvalRun>(`${path}/cancel/`, { method: 'POST' });
      await reload();
      return 'Cancelling: the rows that ended keep their scores';
    });

  if (!run) return <Status error={error} loading />;
  const results = run.results ?? null;
  const examples = results?.subset_metrics.default.per_example_results ?? [];
  return (
    <section aria-labelledby="eval-run-title">
      <h1 id="eval-run-title">
        Eval run {run.run_id} <EvalStatusBadge status={run.status} />
      </h1>
      <dl class="facts">
        <dt>Score</dt>
        <dd class="score">
          {results ? <data value={String(results.accuracy)}>{score(results)}</data> : 'no row scored yet'}
          {isOpen(run.status) && results ? `, ${results.scored_samples} of ${run.num_samples} rows scored so far` : ''}
        </dd>
        <dt>Suite</dt>
        <dd>
          <ConsoleLink to={`/evals/suites/${encodeURIComponent(run.suite_id)}`}>{run.eval_name}</ConsoleLink>
        </dd>
        <dt>Workflow</dt>
        <dd>
          {run.workflow_id}, version {run.workflow_version}, output {run.output_variable}
        </dd>
        <dt>Rows</dt>
        <dd>the suite's first {run.num_samples}</dd>
        <dt>Batch run</dt>
        <dd>
          <ConsoleLink to={`/runs/${encodeURIComponent(run.batch_run_id)}`}>{run.batch_run_id}</ConsoleLink>
        </dd>
        <dt>Tokens</dt>
        <dd>{results ? results.usage.prompt_tokens + results.usage.completion_tokens : '—'}</dd>
        <dt>Cost</dt>
        <dd>{usd(results?.usage.cost_usd)}</dd>
        <dt>Started</dt>
        <dd>{when(run.start_time)}</dd>
        <dt>Ended</dt>
        <dd>{when(run.end_time)}</dd>
        {run.message && (
          <>
            <dt>Message</dt>
            <dd class="plain-text">{run.message}</dd>
          </>
        )}
      </dl>
      <Status error={error ?? action.error} notice={action.notice} />
      {canBuild && isOpen(run.status) && (
        <div class="actions">
          <button type="button" disabled={action.busy} onClick={() => void cancel()}>
            Cancel eval run
          </button>
        </div>
      )}
      <h2>Rows</h2>
      <ExamplesTable examples={examples} />
      <h2>Requests the rows would have sent</h2>
      <WouldBeRequests examples={examples} />
    </section>
  );
}
