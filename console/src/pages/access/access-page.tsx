import { useApi } from '../../loading';
import { BASE, follow } from '../../navigation';
import { useCan } from '../../session';
import { AuditSection } from './audit';
import { KeysSection } from './keys';
import type { User, Workspace } from './types';
import { UsersSection } from './users';
import { WorkspacesSection } from './workspaces';

/**
 * Who may do what: users, API keys, workspaces and their members, and the audit trail. Its
 * permission is `users.manage` (an admin of the installation); each section asks the API and shows
 * its own answer, so a caller without it reads the API's refusal, and sees no action to take.
 */
export function AccessPage() {
  // Read once for the whole page: the keys and members forms pick users and workspaces from them.
  const users = useApi<User[]>('/access/users/?page_size=100');
  const workspaces = useApi<Workspace[]>('/access/workspaces/?page_size=100');
  return (
    <section aria-labelledby="access-title" class="access">
      <h1 id="access-title">Access</h1>
      <UsersSection users={users.data} error={users.error} reload={users.reload} />
      <KeysSection users={users.data ?? []} workspaces={workspaces.data ?? []} />
      <WorkspacesSection
        workspaces={workspaces.data}
        error={workspaces.error}
        reload={workspaces.reload}
        users={users.data ?? []}
      />
      <AuditSection users={users.data ?? []} />
    </section>
  );
}

/** The navigation's link to Access, for those whose permissions allow it (the gate decides anyway). */
export function AccessLink() {
  const canManage = useCan('users.manage');
  if (!canManage) return null;
  return (
    <a href={`${BASE}/access`} onClick={(event) => follow(event, '/access')}>
      Access
    </a>
  );
}
