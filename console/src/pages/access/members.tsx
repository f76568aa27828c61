import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Status, useAction, useApi } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { UserSelect } from './user-select';
import { ConfirmButton } from '../../confirm-button';
import { countOf } from './count';
import { RoleSelect } from './role-select';
import type { Member, User, Workspace } from './types';

/** One workspace's members and their roles there: add a user with a role (or change it), take one out. */
export function MembersPanel({ workspace, users }: { workspace: Workspace; users: User[] }) {
  const base = `/access/workspaces/${encodeURIComponent(workspace.id)}/members/`;
  const { data: members, error, reload } = useApi<Member[]>(base);
  const canManage = useCan('members.manage');
  const action = useAction();
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState('viewer');

  const add = () =>
    action.act(async () => {
      const member = await api<Member>(`${base}${encodeURIComponent(userId)}`, { method: 'PUT', body: { role } });
      await reload();
      return `${member.username} is a member of ${workspace.name} as ${member.role}`;
    });
  const remove = (member: Member) =>
    action.act(async () => {
      await api(`${base}${encodeURIComponent(member.user_id)}`, { method: 'DELETE' });
      await reload();
      return `${member.username} is no longer a member of ${workspace.name}`;
    });

  return (
    <section aria-labelledby="members-title" class="members">
      <h3 id="members-title">
        Members of {workspace.name} ({workspace.id})
      </h3>
      <Status error={error ?? action.error} notice={action.notice} loading={members === null} />
      {canManage && (
        <form
          class="actions"
          aria-label={`Add a member to ${workspace.name}`}
          onSubmit={(event) => {
            event.preventDefault();
            void add();
          }}
        >
          <label>
            User
            <UserSelect users={users} value={userId} none="pick a user" required onChange={setUserId} />
          </label>
          <label>
            Role in {workspace.name}
            <RoleSelect value={role} onChange={setRole} />
          </label>
          <button type="submit" disabled={action.busy}>
            Add member
          </button>
        </form>
      )}
      {members && (
        <table class="members">
          <caption>{countOf(members.length, 'member')}</caption>
          <TableHead columns={['User', 'Id', 'Role', canManage && 'Actions']} />
          <tbody>
            {members.map((m) => (
              <tr data-member={m.user_id}>
                <td>{m.username}</td>
                <td>{m.user_id}</td>
                <td>{m.role}</td>
                {canManage && (
                  <td>
                    <ConfirmButton
                      label={`Remove ${m.username}`}
                      question={`Take ${m.username} out of ${workspace.name}? Their keys of it are revoked.`}
                      confirmLabel={`Yes, remove ${m.username}`}
                      disabled={action.busy}
                      onConfirm={() => void remove(m)}
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
