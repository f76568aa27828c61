import { useState } from 'preact/hooks';
import { api } from '../../api';
import { RoleSelect } from './role-select';
import { UserSelect } from './user-select';
import type { NewKey, User, Workspace } from './types';

/**
 * POST /api/access/keys/: a key for a user (yourself when none is picked), acting in a workspace
 * with at most its user's role there. The key the API answers goes to `onMade` and nowhere else.
 */
export function NewKeyForm({
  users,
  workspaces,
  busy,
  act,
  onMade,
}: {
  users: User[];
  workspaces: Workspace[];
  busy: boolean;
  act: (work: () => Promise<string | void>) => Promise<void>;
  onMade: (key: NewKey) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState('');
  const [workspaceId, setWorkspaceId] = useState('');
  const [expires, setExpires] = useState('');

  const make = () =>
    act(async () => {
      const key = await api<NewKey>('/access/keys/', {
        method: 'POST',
        body: {
          name,
          // Left out, each takes the API's default: yourself, the owner's role, this workspace, never.
          ...(userId ? { user_id: userId } : {}),
          ...(role ? { role } : {}),
          ...(workspaceId ? { workspace_id: workspaceId } : {}),
          ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
        },
      });
      setName('');
      setExpires('');
      await onMade(key);
    });

  return (
    <form
      class="actions"
      aria-label="New key"
      onSubmit={(event) => {
        event.preventDefault();
        void make();
      }}
    >
      <label>
        Key name
        <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        For user
        <UserSelect users={users} value={userId} none="me" onChange={setUserId} />
      </label>
      <label>
        Key role
        <RoleSelect value={role} none="the user's role" onChange={setRole} />
      </label>
      <label>
        Acts in
        <select name="workspace_id" value={workspaceId} onChange={(e) => setWorkspaceId(e.currentTarget.value)}>
          <option value="">this workspace</option>
          {workspaces.map((w) => (
            <option value={w.id}>
              {w.name} ({w.id})
            </option>
          ))}
        </select>
      </label>
      <label>
        Expires
        <input
          type="datetime-local"
          name="expires_at"
          value={expires}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
