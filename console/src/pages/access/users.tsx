import { useState } from 'preact/hooks';
import { api } from '../../api';
import { when } from '../../format';
import { Status, useAction } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { ConfirmButton } from '../../confirm-button';
import { countOf } from './count';
import { RoleSelect } from './role-select';
import { roleOf, type User } from './types';
import { NewUserForm } from './user-form';

const signIn = (u: User) =>
  [u.has_password && 'password', u.oidc && 'OpenID'].filter(Boolean).join(', ') || 'keys only';

/** The installation's users and their role in `default`: create one, change a role, delete one. */
export function UsersSection({
  users,
  error,
  reload,
}: {
  users: User[] | null;
  error: string | null;
  reload: () => Promise<void>;
}) {
  const canManage = useCan('users.manage');
  const action = useAction();
  // A role picked in a row, until it is set (a select alone changes nothing: its button does).
  const [picked, setPicked] = useState<Record<string, string>>({});

  const setRole = (user: User, value: string) =>
    action.act(async () => {
      const changed = await api<User>(`/access/users/${encodeURIComponent(user.id)}/`, {
        method: 'PUT',
        body: { role: roleOf(value) },
      });
      await reload();
      return `${changed.username} is now ${changed.role ?? 'no member of default'}`;
    });
  const remove = (user: User) =>
    action.act(async () => {
      await api(`/access/users/${encodeURIComponent(user.id)}/`, { method: 'DELETE' });
      await reload();
      return `User ${user.username} deleted, with their sessions and keys`;
    });

  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <Status error={error ?? action.error} notice={action.notice} loading={users === null} />
      {canManage && <NewUserForm busy={action.busy} act={action.act} onCreated={reload} />}
      {users && (
        <table class="users">
          <caption>
            {countOf(users.length, 'user')}
            {users.length > 1 ? ', oldest first' : ''}
            {users.length === 100 ? ' (the first 100)' : ''}
          </caption>
          <TableHead
            columns={['User', 'Id', 'Role in default', 'Signs in with', 'State', 'Last seen', canManage && 'Actions']}
          />
          <tbody>
            {users.map((u) => (
              <tr data-user={u.id}>
                <td>{u.display_name ? `${u.username} (${u.display_name})` : u.username}</td>
                <td>{u.id}</td>
                <td>
                  {canManage ? (
                    <span class="inline">
                      <RoleSelect
                        value={picked[u.id] ?? u.role ?? ''}
                        none="no role"
                        label={`Role of ${u.username}`}
                        onChange={(value) => setPicked({ ...picked, [u.id]: value })}
                      />
                      <button
                        type="button"
                        disabled={action.busy || (picked[u.id] ?? u.role ?? '') === (u.role ?? '')}
                        onClick={() => void setRole(u, picked[u.id] ?? '')}
                      >
                        Set role of {u.username}
                      </button>
                    </span>
                  ) : (
                    (u.role ?? 'no role')
                  )}
                </td>
                <td>{signIn(u)}</td>
                <td>{u.disabled ? 'disabled' : 'active'}</td>
                <td>{when(u.last_seen_at)}</td>
                {canManage && (
                  <td>
                    <ConfirmButton
                      label={`Delete ${u.username}`}
                      question={`Delete ${u.username}? Their sessions end and their keys stop working.`}
                      confirmLabel={`Yes, delete ${u.username}`}
                      disabled={action.busy}
                      onConfirm={() => void remove(u)}
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
