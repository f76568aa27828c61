import { Status, useApi } from '../../loading';
import { useCan } from '../../session';
import { type EvalRun, type Suite, isOpen } from './eval-types';
import { EvalRunsTable } from './eval-runs-table';
import { LaunchPanel } from './launch-panel';
import { useRefreshWhile } from './refresh-while';
import { SuitesTable } from './suites-table';

/** /console/evals: the suites and the eval runs, with their scores; launch forms for roles holding `build`. */
export function EvalsPage() {
  const suites = useApi<Suite[]>('/evals/suites/');
  const runs = useApi<EvalRun[]>('/evals/runs/');
  const canBuild = useCan('build');
  useRefreshWhile(runs.data?.some((r) => isOpen(r.status)) ?? false, runs.reload, 5000);

  return (
    <section aria-labelledby="evals-title">
      <h1 id="evals-title">Evals</h1>
      {canBuild && suites.data && <LaunchPanel suites={suites.data} />}
      <h2>Suites</h2>
      <Status error={suites.error} loading={suites.data === null} />
      {suites.data && <SuitesTable suites={suites.data} />}
      <h2>Eval runs</h2>
      <Status error={runs.error} loading={runs.data === null} />
      {runs.data && <EvalRunsTable runs={runs.data} caption="Eval runs" />}
    </section>
  );
}
