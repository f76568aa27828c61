import { TableHead } from '../table-head';
import { useEffect, useState } from 'preact/hooks';
import { query } from '../api';
import { Status, useApi } from '../loading';
import { useCan } from '../session';
import { BulkActions } from './bulk-actions';
import { duration, usd, when } from '../format';
import { BASE, follow, navigate } from '../navigation';
import type { Run } from '../types';

const PAGE_SIZE = 20;
const STATUSES = ['', 'PENDING', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELED'];
const TRIGGERS = ['', 'client', 'schedule', 'webhook', 'subworkflow'];
const FILTERS = ['workflow_id', 'status', 'run_type', 'trigger', 'start_date', 'end_date'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The filters and page are the page's address: a filtered list can be bookmarked and shared. */
function fromAddress(search: string): { filters: Filters; page: number } {
  const params = new URLSearchParams(search);
  const filters: Filters = {};
  for (const key of FILTERS) {
    const value = params.get(key);
    if (value) filters[key] = value;
  }
  return { filters, page: Math.max(1, Number(params.get('page') ?? 1) || 1) };
}

/** Runs, newest first: filter by workflow, status, run type, what started them and when; a page at a time. */
export function RunsPage({ search }: { search: string }) {
  const { filters, page } = fromAddress(search);
  const [draft, setDraft] = useState<Filters>(filters);
  const dates = {
    start_date: filters.start_date ? new Date(filters.start_date).toISOString() : undefined,
    end_date: filters.end_date ? new Date(filters.end_date).toISOString() : undefined,
  };
  const {
    data: runs,
    error,
    reload,
  } = useApi<Run[]>(`/run/${query({ ...filters, ...dates, page, page_size: PAGE_SIZE })}`);
  const [selected, setSelected] = useState<string[]>([]);
  const canSelect = useCan('pause.decide');
  useEffect(() => {
    setDraft(filters);
    setSelected([]);
  }, [search]);
  const toggle = (id: string, on: boolean) => setSelected(on ? [...selected, id] : selected.filter((s) => s !== id));
  const allOnPage = runs !== null && runs.length > 0 && runs.every((r) => selected.includes(r.id));

  const go = (next: Filters, nextPage = 1) =>
    navigate(`/runs${query({ ...next, page: nextPage > 1 ? nextPage : undefined })}`);
  const field = (key: keyof Filters, label: string, input: preact.JSX.Element) => (
    <label>
      {label}
      {input}
    </label>
  );
  const set = (key: keyof Filters) => (event: Event) =>
    setDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value || undefined });

  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          go(draft);
        }}
      >
        {field(
          'workflow_id',
          'Workflow',
          <input name="workflow_id" value={draft.workflow_id ?? ''} onInput={set('workflow_id')} />,
        )}
        {field(
          'status',
          'Status',
          <select name="status" value={draft.status ?? ''} onChange={set('status')}>
            {STATUSES.map((s) => (
              <option value={s}>{s || 'any'}</option>
            ))}
          </select>,
        )}
        {field(
          'run_type',
          'Run type',
          <input name="run_type" value={draft.run_type ?? ''} onInput={set('run_type')} />,
        )}
        {field(
          'trigger',
          'Started by',
          <select name="trigger" value={draft.trigger ?? ''} onChange={set('trigger')}>
            {TRIGGERS.map((t) => (
              <option value={t}>{t || 'anything'}</option>
            ))}
          </select>,
        )}
        {field(
          'start_date',
          'From',
          <input type="datetime-local" name="start_date" value={draft.start_date ?? ''} onInput={set('start_date')} />,
        )}
        {field(
          'end_date',
          'To',
          <input type="datetime-local" name="end_date" value={draft.end_date ?? ''} onInput={set('end_date')} />,
        )}
        <button type="submit">Filter</button>
      </form>
      <Status error={error} loading={runs === null} />
      {canSelect && runs && runs.length > 0 && (
        <div class="selection">
          <label>
            <input
              type="checkbox"
              checked={allOnPage}
              onChange={(e) => setSelected(e.currentTarget.checked ? runs.map((r) => r.id) : [])}
            />
            Select every run on this page
          </label>
          <BulkActions selected={selected} onDone={() => void reload()} />
        </div>
      )}
      {runs && (
        <table class="runs">
          <caption>
            Page {page}
            {runs.length === 0 ? ': no runs' : ''}
          </caption>
          <TableHead
            columns={[
              canSelect && 'Select',
              'Run',
              'Workflow',
              'Status',
              'Type',
              'Started by',
              'Started',
              'Duration',
              'Cost',
            ]}
          />
          <tbody>
            {runs.map((run) => (
              <tr data-run={run.id}>
                {canSelect && (
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select run ${run.id}`}
                      checked={selected.includes(run.id)}
                      onChange={(e) => toggle(run.id, e.currentTarget.checked)}
                    />
                  </td>
                )}
                <td>
                  <a href={`${BASE}/runs/${run.id}`} onClick={(event) => follow(event, `/runs/${run.id}`)}>
                    {run.id}
                  </a>
                </td>
                <td>{run.workflow_id}</td>
                <td>
                  <span class={`status status-${run.status.toLowerCase()}`}>{run.status}</span>
                </td>
                <td>{run.run_type}</td>
                <td>{run.trigger ? `${run.trigger.kind} ${run.trigger.id}` : 'client'}</td>
                <td>{when(run.start_time)}</td>
                <td>{duration(run.duration)}</td>
                <td>{usd(run.usage?.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={page <= 1} onClick={() => go(filters, page - 1)}>
          Newer
        </button>
        <button type="button" disabled={!runs || runs.length < PAGE_SIZE} onClick={() => go(filters, page + 1)}>
          Older
        </button>
      </nav>
    </section>
  );
}
