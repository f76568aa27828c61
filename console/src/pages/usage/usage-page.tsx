import { TableHead } from '../../table-head';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { query } from '../../api';
import { Status, useApi } from '../../loading';
import { BudgetsTable } from './budgets-table';
import { LimitsTable } from './limits-table';
import { usd } from '../../format';

/** GET /api/usage/, the fields the page shows. */
interface Totals {
  cost_usd: number;
  calls: number;
  runs: number;
  prompt_tokens: number;
  completion_tokens: number;
  unpriced_calls: number;
}
interface Ledger {
  groups: Array<Totals & { key: string }>;
  total: Totals;
}

const GROUPS = [
  ['day', 'Day'],
  ['workflow', 'Workflow'],
  ['model', 'Model'],
] as const;
type GroupBy = (typeof GROUPS)[number][0];

/** Spend per day as a chart (uPlot, bundled), the same numbers in the table below it. */
function SpendChart({ days }: { days: Ledger['groups'] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || days.length === 0) return;
    const sorted = [...days].sort((a, b) => a.key.localeCompare(b.key));
    const x = sorted.map((d) => Date.parse(`${d.key}T00:00:00Z`) / 1000);
    const chart = new uPlot(
      {
        width: Math.min(900, box.current.clientWidth || 900),
        height: 240,
        series: [{}, { label: 'Cost (USD)', stroke: '#0969da', fill: 'rgba(9,105,218,0.15)', points: { size: 6 } }],
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => `$${t}`) }],
      },
      [x, sorted.map((d) => d.cost_usd)],
      box.current,
    );
    return () => chart.destroy();
  }, [days]);
  return (
    <div
      ref={box}
      class="chart"
      role="img"
      aria-label={`Spend over ${days.length} days, as the table below lists it`}
    />
  );
}

/** LLM spend and tokens from the ledger, by day, workflow or model; budgets and their spending; provider limits and breakers. */
export function UsagePage() {
  const [groupBy, setGroupBy] = useState<GroupBy>('day');
  const { data: ledger, error } = useApi<Ledger>(`/usage/${query({ group_by: groupBy })}`);

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <label class="inline">
        Group by
        <select name="group_by" value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as GroupBy)}>
          {GROUPS.map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </label>
      <Status error={error} loading={ledger === null} />
      {ledger && (
        <>
          <p class="total">
            Total {usd(ledger.total.cost_usd)} · {ledger.total.calls} calls · {ledger.total.runs} runs ·{' '}
            {ledger.total.prompt_tokens + ledger.total.completion_tokens} tokens
            {ledger.total.unpriced_calls > 0 ? ` · ${ledger.total.unpriced_calls} calls without a price` : ''}
          </p>
          {groupBy === 'day' && <SpendChart days={ledger.groups} />}
          <table class="usage">
            <TableHead
              columns={[
                GROUPS.find(([v]) => v === groupBy)?.[1],
                'Cost',
                'Calls',
                'Runs',
                'Prompt tokens',
                'Completion tokens',
              ]}
            />
            <tbody>
              {ledger.groups.map((g) => (
                <tr data-key={g.key}>
                  <td>{g.key}</td>
                  <td>{usd(g.cost_usd)}</td>
                  <td>{g.calls}</td>
                  <td>{g.runs}</td>
                  <td>{g.prompt_tokens}</td>
                  <td>{g.completion_tokens}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <BudgetsTable />
      <LimitsTable scope="workspace" />
      <LimitsTable scope="fleet" />
    </section>
  );
}
