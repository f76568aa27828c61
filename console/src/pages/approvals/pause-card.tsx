import { useContext, useState } from 'preact/hooks';
import { api } from '../../api';
import { when } from '../../format';
import { JsonField, parseJson } from '../../json-field';
import { Status, useAction } from '../../loading';
import { BASE, follow } from '../../navigation';
import { MeContext } from '../../session';
import { TextField } from '../../text-field';
import { DecisionList, PauseHistory } from './pause-history';
import type { Paused } from './paused';

/**
 * What a person may do with a pause (POST /api/wf/process_pause_action/{run_id}/): approve (the
 * node's data plus theirs, its own keys winning), override (theirs winning) or decline.
 */
const DECISIONS = [
  ['APPROVE', 'Approve'],
  ['OVERRIDE', 'Override'],
  ['DECLINE', 'Decline'],
] as const;

/** One paused run: the pause's message and node, what the node was given, the decisions so far; decide it. */
export function PauseCard({
  item,
  canDecide,
  onDecided,
}: {
  item: Paused;
  canDecide: boolean;
  onDecided: () => Promise<void>;
}) {
  const me = useContext(MeContext);
  const [comment, setComment] = useState('');
  const [data, setData] = useState('');
  const action = useAction();
  const runId = item.run.id;
  const pause = item.current_pause;

  const decide = (decision: string) =>
    action.act(async () => {
      const parsed = parseJson(data);
      if ('problem' in parsed) throw new Error(`The data is not JSON: ${parsed.problem}`);
      await api(`/wf/process_pause_action/${encodeURIComponent(runId)}/`, {
        method: 'POST',
        body: {
          inputs: parsed.value ?? {},
          user_id: me?.username ?? 'console',
          action: decision,
          comments: comment || null,
        },
      });
      await onDecided();
    });

  return (
    <article class="pause" data-run={runId} aria-labelledby={`pause-${runId}`}>
      <h3 id={`pause-${runId}`}>{pause.pause_message ?? 'A run waits for a decision'}</h3>
      <p>
        {item.workflow.name} ·{' '}
        <a href={`${BASE}/runs/${runId}`} onClick={(event) => follow(event, `/runs/${runId}`)}>
          run {runId}
        </a>{' '}
        · node {pause.node_id} · paused {when(pause.pause_time)}
      </p>
      <pre class="json">{JSON.stringify(pause.input_data ?? {}, null, 2)}</pre>
      <DecisionList decisions={pause.decisions} />
      {canDecide && (
        <div class="actions">
          <TextField label="Comment" name="comments" value={comment} onValue={setComment} />
          <JsonField
            label="Data"
            name="inputs"
            hint="A JSON object: added to the node's data on approve, replacing its keys on override"
            text={data}
            onText={setData}
          />
          {DECISIONS.map(([decision, label]) => (
            <button type="button" disabled={action.busy} onClick={() => void decide(decision)}>
              {label}
            </button>
          ))}
        </div>
      )}
      <Status error={action.error} />
      <PauseHistory runId={runId} />
    </article>
  );
}
