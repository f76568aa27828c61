import { useState } from 'preact/hooks';
import { api } from '../../api';
import { when } from '../../format';
import { Status, useAction } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { countOf } from './count';
import { MembersPanel } from './members';
import type { User, Workspace } from './types';

/** The workspaces (every one for an installation admin): create one, open one's members. */
export function WorkspacesSection({
  workspaces,
  error,
  reload,
  users,
}: {
  workspaces: Workspace[] | null;
  error: string | null;
  reload: () => Promise<void>;
  users: User[];
}) {
  const canCreate = useCan('users.manage');
  // A workspace's members are listed only to whoever may manage them.
  const canSeeMembers = useCan('members.manage');
  const action = useAction();
  const [name, setName] = useState('');
  const [open, setOpen] = useState<Workspace | null>(null);

  const create = () =>
    action.act(async () => {
      const made = await api<Workspace>('/access/workspaces/', { method: 'POST', body: { name } });
      setName('');
      await reload();
      return `Workspace ${made.name} (${made.id}) created`;
    });

  return (
    <section aria-labelledby="workspaces-title">
      <h2 id="workspaces-title">Workspaces</h2>
      <Status error={error ?? action.error} notice={action.notice} loading={workspaces === null} />
      {canCreate && (
        <form
          class="actions"
          aria-label="New workspace"
          onSubmit={(event) => {
            event.preventDefault();
            void create();
          }}
        >
          <label>
            Workspace name
            <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Create workspace
          </button>
        </form>
      )}
      {workspaces && (
        <table class="workspaces">
          <caption>
            {countOf(workspaces.length, 'workspace')}
            {workspaces.length > 1 ? ', oldest first' : ''}
            {workspaces.length === 100 ? ' (the first 100)' : ''}
          </caption>
          <TableHead columns={['Workspace', 'Id', 'Created', canSeeMembers && 'Members']} />
          <tbody>
            {workspaces.map((w) => (
              <tr data-workspace={w.id}>
                <td>{w.name}</td>
                <td>{w.id}</td>
                <td>{when(w.created_at)}</td>
                {canSeeMembers && (
                  <td>
                    <button type="button" aria-pressed={open?.id === w.id} onClick={() => setOpen(w)}>
                      Members of {w.name}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && canSeeMembers && <MembersPanel key={open.id} workspace={open} users={users} />}
    </section>
  );
}
