import { useState } from 'preact/hooks';
import type { Trigger } from './trigger';
import { api } from '../../api';
import { JsonField, parseJson } from '../../json-field';
import { Status, useAction } from '../../loading';
import { TextField } from '../../text-field';

const SCHEMES = [
  ['', 'none'],
  ['hmac', 'HMAC of the body (GitHub)'],
  ['stripe', 'timestamped HMAC (Stripe)'],
] as const;

/**
 * Creates a webhook trigger for a workflow (POST /api/wf/{id}/triggers/) or replaces one (PUT
 * /api/triggers/{id}/: its URL stays, a secret left empty is kept). The API checks every field;
 * its message is shown as it is.
 */
export function TriggerForm({
  workflowId,
  trigger,
  onSaved,
}: {
  workflowId: string;
  trigger?: Trigger;
  onSaved: (saved: Trigger) => void;
}) {
  const [name, setName] = useState(trigger?.name ?? '');
  const [respond, setRespond] = useState<'accepted' | 'result'>(trigger?.respond ?? 'accepted');
  const [dedupe, setDedupe] = useState(trigger?.dedupe_header ?? '');
  const [mapping, setMapping] = useState(trigger?.input_mapping ? JSON.stringify(trigger.input_mapping, null, 2) : '');
  const [scheme, setScheme] = useState<string>(trigger?.signature?.scheme ?? '');
  const [header, setHeader] = useState(trigger?.signature?.header ?? '');
  const [prefix, setPrefix] = useState(trigger?.signature?.prefix ?? '');
  const [secret, setSecret] = useState('');
  const action = useAction();
  const editing = trigger !== undefined;

  const save = () =>
    action.act(async () => {
      const parsed = parseJson(mapping);
      if ('problem' in parsed) throw new Error(`Input mapping is not JSON: ${parsed.problem}`);
      const body = {
        name,
        respond,
        dedupe_header: dedupe || null,
        input_mapping: parsed.value,
        signature: scheme ? { scheme, header, ...(scheme === 'hmac' ? { prefix } : {}) } : null,
        ...(secret ? { secret } : {}),
      };
      const saved = editing
        ? await api<Trigger>(`/triggers/${encodeURIComponent(trigger.id)}/`, { method: 'PUT', body })
        : await api<Trigger>(`/wf/${encodeURIComponent(workflowId)}/triggers/`, { method: 'POST', body });
      setSecret('');
      onSaved(saved);
      return `Trigger ${saved.name} ${editing ? 'saved' : 'created'}`;
    });

  return (
    <form
      class="trigger-form"
      aria-label={editing ? `Edit trigger ${trigger.name}` : 'New trigger'}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <TextField label="Name" name="name" required value={name} onValue={setName} />
      <label>
        Answer
        <select name="respond" value={respond} onChange={(e) => setRespond(e.currentTarget.value as typeof respond)}>
          <option value="accepted">202 once the run is recorded</option>
          <option value="result">the run's outputs</option>
        </select>
      </label>
      <TextField
        label="Delivery id header"
        name="dedupe_header"
        placeholder="X-GitHub-Delivery"
        value={dedupe}
        onValue={setDedupe}
      />
      <JsonField
        label="Input mapping"
        name="input_mapping"
        hint='Each input field from a JSON pointer into the body, e.g. {"title": "/pull_request/title"}; empty: the whole body'
        text={mapping}
        onText={setMapping}
      />
      <label>
        Signature
        <select name="scheme" value={scheme} onChange={(e) => setScheme(e.currentTarget.value)}>
          {SCHEMES.map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </label>
      {scheme && (
        <>
          <TextField label="Signature header" name="signature_header" required value={header} onValue={setHeader} />
          {scheme === 'hmac' && (
            <TextField label="Prefix" name="prefix" placeholder="sha256=" value={prefix} onValue={setPrefix} />
          )}
          <TextField
            label={`Secret${editing && trigger.has_secret ? ' (empty keeps the stored one)' : ''}`}
            name="secret"
            type="password"
            autocomplete="new-password"
            value={secret}
            onValue={setSecret}
          />
        </>
      )}
      <button type="submit" disabled={action.busy || !name}>
        {editing ? 'Save trigger' : 'Create trigger'}
      </button>
      <Status error={action.error} notice={action.notice} />
    </form>
  );
}
