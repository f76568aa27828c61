import { usd } from '../../format';
import { Status, useApi } from '../../loading';
import { TableHead } from '../../table-head';

/** GET /api/usage/budgets/: a workflow's budget and its spending. */
interface BudgetState {
  workflow_id: string;
  per_run_usd: number | null;
  per_day_usd: number | null;
  per_month_usd: number | null;
  on_exceed: 'pause' | 'fail';
  spent_today_usd: number;
  spent_this_month_usd: number;
}

/** "$0.40 of $1.00 (40 %)", or the spending alone when there is no such budget. */
function against(spent: number, limit: number | null): string {
  if (limit === null) return usd(spent);
  return `${usd(spent)} of ${usd(limit)} (${Math.round((spent / limit) * 100)} %)`;
}

/** The workspace's workflow budgets and how much of each day's and month's is spent. */
export function BudgetsTable() {
  const { data: budgets, error } = useApi<BudgetState[]>('/usage/budgets/');
  return (
    <section aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <Status error={error} loading={budgets === null} />
      {budgets && (
        <table class="budgets">
          <caption>{budgets.length === 0 ? 'No workflow has a budget' : 'Spent this UTC day and month'}</caption>
          <TableHead columns={['Workflow', 'Per run', 'Today', 'This month', 'When passed']} />
          <tbody>
            {budgets.map((b) => {
              const over = [
                [b.spent_today_usd, b.per_day_usd],
                [b.spent_this_month_usd, b.per_month_usd],
              ].some(([spent, limit]) => limit !== null && limit !== undefined && (spent ?? 0) >= limit);
              return (
                <tr data-workflow={b.workflow_id} class={over ? 'over' : undefined}>
                  <td>{b.workflow_id}</td>
                  <td>{b.per_run_usd === null ? '—' : usd(b.per_run_usd)}</td>
                  <td>{against(b.spent_today_usd, b.per_day_usd)}</td>
                  <td>{against(b.spent_this_month_usd, b.per_month_usd)}</td>
                  <td>{b.on_exceed === 'pause' ? 'pause for a person' : 'fail the node'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
