import { TableHead } from '../table-head';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { when } from '../format';
import { useCan } from '../session';

/** GET /api/schedules/, the fields the list shows. */
interface Schedule {
  id: string;
  workflow_id: string;
  cron: string | null;
  interval_seconds: number | null;
  timezone: string;
  paused: boolean;
  note: string | null;
  next_run_times: string[];
}

const every = (s: Schedule) => (s.cron ? `cron ${s.cron} (${s.timezone})` : `every ${s.interval_seconds ?? '?'} s`);

/** The workspace's schedules: when each fires next; pause, unpause, or fire one now. */
export function SchedulesPage() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const canRun = useCan('run');

  const load = () =>
    api<Schedule[]>('/schedules/')
      .then(setSchedules)
      .catch((err: unknown) => setError(err instanceof ApiError ? err.message : String(err)));
  useEffect(() => void load(), []);

  const act = async (schedule: Schedule, what: 'pause' | 'unpause' | 'trigger') => {
    setError(null);
    setNotice(null);
    try {
      await api(`/schedules/${encodeURIComponent(schedule.id)}/${what}/`, { method: 'POST' });
      if (what === 'trigger') setNotice(`Schedule ${schedule.id} fired: its run starts now`);
      await load();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  return (
    <section aria-labelledby="schedules-title">
      <h1 id="schedules-title">Schedules</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {notice && (
        <p role="status" class="notice">
          {notice}
        </p>
      )}
      {schedules === null && !error && <p aria-live="polite">Loading…</p>}
      {schedules && (
        <table class="schedules">
          <caption>{schedules.length === 0 ? 'No schedules' : `${schedules.length} schedules`}</caption>
          <TableHead columns={['Schedule', 'Workflow', 'When', 'Next', 'State', canRun && 'Actions']} />
          <tbody>
            {schedules.map((s) => (
              <tr data-schedule={s.id}>
                <td>
                  {s.id}
                  {s.note ? ` — ${s.note}` : ''}
                </td>
                <td>{s.workflow_id}</td>
                <td>{every(s)}</td>
                <td>{s.paused ? '—' : when(s.next_run_times[0])}</td>
                <td>{s.paused ? 'paused' : 'active'}</td>
                {canRun && (
                  <td class="row-actions">
                    <button type="button" onClick={() => void act(s, s.paused ? 'unpause' : 'pause')}>
                      {s.paused ? 'Unpause' : 'Pause'} {s.id}
                    </button>
                    <button type="button" onClick={() => void act(s, 'trigger')}>
                      Run {s.id} now
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
