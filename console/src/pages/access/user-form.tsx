import { useState } from 'preact/hooks';
import { api } from '../../api';
import { RoleSelect } from './role-select';
import { roleOf, type User } from './types';

/** POST /api/access/users/: a user who signs in with a password, with a role in `default`. */
export function NewUserForm({
  busy,
  act,
  onCreated,
}: {
  busy: boolean;
  act: (work: () => Promise<string | void>) => Promise<void>;
  onCreated: () => Promise<void>;
}) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState('viewer');

  const create = () =>
    act(async () => {
      const made = await api<User>('/access/users/', {
        method: 'POST',
        // No password: the user signs in only through OpenID or with keys an admin makes for them.
        body: { username, role: roleOf(role), ...(password ? { password } : {}) },
      });
      setUsername('');
      setPassword('');
      await onCreated();
      return `User ${made.username} (${made.id}) created${made.role ? ` as ${made.role}` : ' with no role'}`;
    });

  return (
    <form
      class="actions"
      aria-label="New user"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <label>
        Username
        <input name="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
      </label>
      {/* The hint is outside the label: it describes the field and is no part of its name. */}
      <div class="field">
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            aria-describedby="new-user-password-hint"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <span id="new-user-password-hint" class="hint">
          10 characters or more; empty: no password sign-in
        </span>
      </div>
      <label>
        Role
        <RoleSelect value={role} none="no role (not in default)" onChange={setRole} />
      </label>
      <button type="submit" disabled={busy}>
        Create user
      </button>
    </form>
  );
}
