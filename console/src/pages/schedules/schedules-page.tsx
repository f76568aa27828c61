import { useState } from 'preact/hooks';
import { api } from '../../api';
import { ConfirmButton } from '../../confirm-button';
import { when } from '../../format';
import { Status, useAction, useApi } from '../../loading';
import { BASE, follow } from '../../navigation';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { BackfillForm } from './backfill-form';
import type { Schedule } from './schedule';
import { ScheduleForm } from './schedule-form';

const every = (s: Schedule) => (s.cron ? `cron ${s.cron} (${s.timezone})` : `every ${s.interval_seconds ?? '?'} s`);

/** The latest run a schedule started, linked to its page. */
function LatestRun({ schedule }: { schedule: Schedule }) {
  const run = schedule.recent_runs[0];
  if (!run) return <>—</>;
  return (
    <a href={`${BASE}/runs/${run.run_id}`} onClick={(event) => follow(event, `/runs/${run.run_id}`)}>
      {run.run_id} {run.status.toLowerCase()}
    </a>
  );
}

/** The workspace's schedules: when each fires next and what it last started; create, edit, pause, fire now, backfill. */
export function SchedulesPage() {
  const { data: schedules, error, reload } = useApi<Schedule[]>('/schedules/?page_size=100');
  const action = useAction();
  const [open, setOpen] = useState<{ id: string; form: 'edit' | 'backfill' } | null>(null);
  const canRun = useCan('run');
  const canBuild = useCan('build');

  const act = (schedule: Schedule, what: 'pause' | 'unpause' | 'trigger') =>
    action.act(async () => {
      await api(`/schedules/${encodeURIComponent(schedule.id)}/${what}/`, { method: 'POST' });
      await reload();
      if (what === 'trigger') return `Schedule ${schedule.id} fired: its run starts now`;
    });
  const remove = (schedule: Schedule) =>
    action.act(async () => {
      await api(`/schedules/${encodeURIComponent(schedule.id)}/`, { method: 'DELETE' });
      await reload();
      return `Schedule ${schedule.id} deleted`;
    });
  const toggle = (id: string, form: 'edit' | 'backfill') =>
    setOpen(open?.id === id && open.form === form ? null : { id, form });
  const done = () => {
    setOpen(null);
    void reload();
  };

  return (
    <section aria-labelledby="schedules-title">
      <h1 id="schedules-title">Schedules</h1>
      <Status error={error ?? action.error} notice={action.notice} loading={schedules === null} />
      {schedules && (
        <table class="schedules">
          <caption>{schedules.length === 0 ? 'No schedules' : `${schedules.length} schedules`}</caption>
          <TableHead
            columns={['Schedule', 'Workflow', 'When', 'Next', 'Latest run', 'State', (canRun || canBuild) && 'Actions']}
          />
          <tbody>
            {schedules.map((s) => (
              <>
                <tr data-schedule={s.id}>
                  <td>
                    {s.id}
                    {s.note ? ` — ${s.note}` : ''}
                  </td>
                  <td>{s.workflow_id}</td>
                  <td>{every(s)}</td>
                  <td>{s.paused ? '—' : when(s.next_run_times[0])}</td>
                  <td>
                    <LatestRun schedule={s} />
                  </td>
                  <td>{s.paused ? 'paused' : 'active'}</td>
                  {(canRun || canBuild) && (
                    <td class="row-actions">
                      {canRun && (
                        <>
                          <button type="button" onClick={() => void act(s, s.paused ? 'unpause' : 'pause')}>
                            {s.paused ? 'Unpause' : 'Pause'} {s.id}
                          </button>
                          <button type="button" onClick={() => void act(s, 'trigger')}>
                            Run {s.id} now
                          </button>
                          <button
                            type="button"
                            aria-expanded={open?.id === s.id && open.form === 'backfill'}
                            onClick={() => toggle(s.id, 'backfill')}
                          >
                            Backfill {s.id}
                          </button>
                        </>
                      )}
                      {canBuild && (
                        <>
                          <button
                            type="button"
                            aria-expanded={open?.id === s.id && open.form === 'edit'}
                            onClick={() => toggle(s.id, 'edit')}
                          >
                            Edit {s.id}
                          </button>
                          <ConfirmButton
                            label={`Delete ${s.id}`}
                            question={`Delete schedule ${s.id}? It fires no more.`}
                            confirmLabel="Yes, delete it"
                            disabled={action.busy}
                            onConfirm={() => void remove(s)}
                          />
                        </>
                      )}
                    </td>
                  )}
                </tr>
                {open?.id === s.id && (
                  <tr class="expanded">
                    <td colSpan={7}>
                      {open.form === 'edit' ? (
                        <ScheduleForm schedule={s} onSaved={done} />
                      ) : (
                        <BackfillForm schedule={s} onDone={() => void reload()} />
                      )}
                    </td>
                  </tr>
                )}
              </>
            ))}
          </tbody>
        </table>
      )}
      {canBuild && (
        <details>
          <summary>New schedule</summary>
          <ScheduleForm onSaved={() => void reload()} />
        </details>
      )}
    </section>
  );
}
