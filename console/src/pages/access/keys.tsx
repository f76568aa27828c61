import { useState } from 'preact/hooks';
import { api } from '../../api';
import { when } from '../../format';
import { Status, useAction, useApi } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { ConfirmButton } from '../../confirm-button';
import { countOf } from './count';
import { NewKeyForm } from './key-form';
import { ShownOnce } from './shown-once';
import type { Key, NewKey, User, Workspace } from './types';

/**
 * The installation's API keys (never a key itself: the API does not keep it), making one for any
 * user and revoking any, which only an admin of the installation may (`users.manage`).
 */
export function KeysSection({ users, workspaces }: { users: User[]; workspaces: Workspace[] }) {
  const { data: keys, error, reload } = useApi<Key[]>('/access/keys/');
  const canManage = useCan('users.manage');
  const action = useAction();
  const [made, setMade] = useState<NewKey | null>(null);
  const username = (id: string) => users.find((u) => u.id === id)?.username ?? id;

  const revoke = (key: Key) =>
    action.act(async () => {
      await api(`/access/keys/${encodeURIComponent(key.id)}/`, { method: 'DELETE' });
      if (made?.id === key.id) setMade(null);
      await reload();
      return `Key ${key.id} (${key.name}) revoked: it is refused from now on`;
    });

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <Status error={error ?? action.error} notice={action.notice} loading={keys === null} />
      <ShownOnce made={made} onDone={() => setMade(null)} />
      {canManage && (
        <NewKeyForm
          users={users}
          workspaces={workspaces}
          busy={action.busy}
          act={action.act}
          onMade={async (key) => {
            setMade(key);
            await reload();
          }}
        />
      )}
      {keys && (
        <table class="keys">
          <caption>{countOf(keys.length, 'key')}</caption>
          <TableHead
            columns={[
              'Key',
              'Name',
              'User',
              'Role',
              'Acts in',
              'Created',
              'Expires',
              'Last used',
              canManage && 'Actions',
            ]}
          />
          <tbody>
            {keys.map((k) => (
              <tr data-key={k.id}>
                <td>{k.id}</td>
                <td>{k.name}</td>
                <td>{username(k.user_id)}</td>
                <td>{k.role}</td>
                <td>{k.workspace_id}</td>
                <td>{when(k.created_at)}</td>
                <td>{k.expires_at ? when(k.expires_at) : 'never'}</td>
                <td>{when(k.last_used_at)}</td>
                {canManage && (
                  <td>
                    <ConfirmButton
                      label={`Revoke ${k.id}`}
                      question={`Revoke ${k.name}? Every request with it is refused at once.`}
                      confirmLabel={`Yes, revoke ${k.id}`}
                      disabled={action.busy}
                      onConfirm={() => void revoke(k)}
                    />
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
