import { useState } from 'preact/hooks';
import { SCHEDULE_OVERLAPS, SCHEDULE_VERSIONS } from '../../../../src/contracts/schedule-contract';
import { api } from '../../api';
import { JsonField, parseJson } from '../../json-field';
import { Status, useAction } from '../../loading';
import { TextField } from '../../text-field';
import { WorkflowSelect } from '../../workflow-select';
import type { Schedule } from './schedule';

/** What each overlap policy does, in the words the form shows. */
const OVERLAP_WORDS: Record<Schedule['overlap'], string> = {
  skip: 'skip the fire',
  buffer_one: 'start one after it',
  buffer_all: 'start every one after it',
  cancel_other: 'cancel the running one',
  allow_all: 'start anyway',
};

/**
 * Creates a schedule for a workflow (POST /api/wf/{id}/schedules/) or changes one (PUT
 * /api/schedules/{id}/). Cron or an interval, never both; the API checks the expression and the zone.
 */
export function ScheduleForm({ schedule, onSaved }: { schedule?: Schedule; onSaved: () => void }) {
  const editing = schedule !== undefined;
  const [workflowId, setWorkflowId] = useState(schedule?.workflow_id ?? '');
  const [timing, setTiming] = useState<'cron' | 'interval'>(schedule?.interval_seconds ? 'interval' : 'cron');
  const [cron, setCron] = useState(schedule?.cron ?? '');
  const [interval, setInterval] = useState(String(schedule?.interval_seconds ?? 3600));
  const [timezone, setTimezone] = useState(schedule?.timezone ?? 'UTC');
  const [inputs, setInputs] = useState(JSON.stringify(schedule?.initial_inputs ?? {}, null, 2));
  const [overlap, setOverlap] = useState<Schedule['overlap']>(schedule?.overlap ?? 'skip');
  const [version, setVersion] = useState<Schedule['version']>(schedule?.version ?? 'latest');
  const [note, setNote] = useState(schedule?.note ?? '');
  const action = useAction();

  const save = () =>
    action.act(async () => {
      const parsed = parseJson(inputs);
      if ('problem' in parsed) throw new Error(`Initial inputs are not JSON: ${parsed.problem}`);
      const body = {
        ...(timing === 'cron' ? { cron, interval_seconds: null } : { cron: null, interval_seconds: Number(interval) }),
        timezone,
        initial_inputs: parsed.value ?? {},
        overlap,
        version,
        note: note || null,
      };
      if (editing) await api(`/schedules/${encodeURIComponent(schedule.id)}/`, { method: 'PUT', body });
      else await api(`/wf/${encodeURIComponent(workflowId)}/schedules/`, { method: 'POST', body });
      onSaved();
      return editing ? `Schedule ${schedule.id} saved` : 'Schedule created';
    });

  return (
    <form
      class="schedule-form"
      aria-label={editing ? `Edit schedule ${schedule.id}` : 'New schedule'}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      {!editing && <WorkflowSelect value={workflowId} onChange={setWorkflowId} />}
      <fieldset>
        <legend>When</legend>
        <label>
          <input type="radio" name="timing" checked={timing === 'cron'} onChange={() => setTiming('cron')} />
          Cron
        </label>
        <label>
          <input type="radio" name="timing" checked={timing === 'interval'} onChange={() => setTiming('interval')} />
          Every so many seconds
        </label>
        {timing === 'cron' ? (
          <TextField label="Cron expression" name="cron" placeholder="0 9 * * 1-5" value={cron} onValue={setCron} />
        ) : (
          <TextField
            label="Seconds between runs"
            name="interval_seconds"
            type="number"
            min={10}
            value={interval}
            onValue={setInterval}
          />
        )}
        <TextField label="Time zone" name="timezone" value={timezone} onValue={setTimezone} />
      </fieldset>
      <JsonField
        label="Initial inputs"
        name="initial_inputs"
        hint='As start_run takes them: {"input_node": {"field": "value"}}'
        text={inputs}
        onText={setInputs}
      />
      <label>
        While the previous run goes on
        <select
          name="overlap"
          value={overlap}
          onChange={(e) => setOverlap(e.currentTarget.value as Schedule['overlap'])}
        >
          {SCHEDULE_OVERLAPS.map((o) => (
            <option value={o}>{OVERLAP_WORDS[o]}</option>
          ))}
        </select>
      </label>
      <label>
        Version
        <select
          name="version"
          value={version}
          onChange={(e) => setVersion(e.currentTarget.value as Schedule['version'])}
        >
          {SCHEDULE_VERSIONS.map((v) => (
            <option value={v}>{v === 'latest' ? 'the latest when it fires' : 'the one saved now'}</option>
          ))}
        </select>
      </label>
      <TextField label="Note" name="note" value={note} onValue={setNote} />
      <button type="submit" disabled={action.busy || (!editing && !workflowId)}>
        {editing ? 'Save schedule' : 'Create schedule'}
      </button>
      <Status error={action.error} notice={action.notice} />
    </form>
  );
}
