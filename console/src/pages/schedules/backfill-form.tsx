import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Status, useAction } from '../../loading';
import { TextField } from '../../text-field';
import type { Schedule } from './schedule';

/** Starts the runs a schedule would have started in a past window (POST /api/schedules/{id}/backfill/). */
export function BackfillForm({ schedule, onDone }: { schedule: Schedule; onDone: () => void }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const action = useAction();
  const backfill = () =>
    action.act(async () => {
      await api(`/schedules/${encodeURIComponent(schedule.id)}/backfill/`, {
        method: 'POST',
        body: { start_time: new Date(from).toISOString(), end_time: new Date(to).toISOString() },
      });
      onDone();
      return `Backfill of ${schedule.id} asked: its runs start as Temporal replays the window`;
    });
  return (
    <form
      class="backfill"
      aria-label={`Backfill schedule ${schedule.id}`}
      onSubmit={(event) => {
        event.preventDefault();
        void backfill();
      }}
    >
      <TextField label="From" name="start_time" type="datetime-local" required value={from} onValue={setFrom} />
      <TextField label="To" name="end_time" type="datetime-local" required value={to} onValue={setTo} />
      <button type="submit" disabled={action.busy || !from || !to}>
        Backfill
      </button>
      <Status error={action.error} notice={action.notice} />
    </form>
  );
}
