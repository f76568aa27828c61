import type { Me } from '../../session';
import type { Run } from '../../types';

/** A decision on a pause, as the API lists it (several when the node asks for a quorum). */
export interface Decision {
  user_id: string;
  username: string | null;
  action: string;
  time: string;
  comments: string | null;
}

/** A pause as GET /api/wf/pause_history/{run_id}/ lists it (PauseHistoryResponse), the fields the inbox shows. */
export interface PauseRecord {
  id: string;
  node_id: string;
  pause_message: string | null;
  pause_time: string;
  resume_time: string | null;
  resume_user_id: string | null;
  resume_action: string | null;
  input_data: Record<string, unknown> | null;
  comments: string | null;
  decisions: Decision[];
}

/** GET /api/wf/paused_workflows/: a paused run, its open pause and its workflow (name and nodes). */
export interface Paused {
  run: Run;
  current_pause: PauseRecord;
  workflow: { name: string; nodes: Array<{ id: string; config?: { approvers?: Approvers | null } }> };
}

/** A HumanInterventionNode's `approvers`: who alone may decide its pause (docs/approvals.md). */
export interface Approvers {
  users?: string[];
  roles?: string[];
}

/**
 * Whether the signed-in caller may decide the pause, as the run's workflow will judge it: a role
 * holding `pause.decide`, and, when the node names approvers, named by id or by role.
 */
export function mayDecide(item: Paused, me: Me | null): boolean {
  if (!me?.permissions.includes('pause.decide')) return false;
  const node = item.workflow.nodes.find((n) => n.id === item.current_pause.node_id);
  const approvers = node?.config?.approvers;
  if (!approvers) return true;
  if (me.user && approvers.users?.includes(me.user.id)) return true;
  return me.role !== null && (approvers.roles?.includes(me.role) ?? false);
}
