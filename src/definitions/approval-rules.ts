import { z } from 'zod';
import { approvalFields } from '../nodes/logic/human-intervention-node';
import type { WorkflowDefinition } from './definition.schema';
import type { RuleIssue } from './definition-rules';
import { USER_ID_PATTERN } from '../contracts/roles';

const approvalConfig = z.looseObject({ ...approvalFields, timeout_seconds: z.unknown().optional() });

type ApprovalConfig = z.output<typeof approvalConfig>;
/** A field of the node's config: its name, or its path. */
type Field = string | (string | number)[];

/**
 * `approvers` that leave a setting unusable: a recipient whose links could never decide (a link
 * decides as its `user_id`, which must be a user's id, and a named user's unless roles are named),
 * or a quorum larger than the users named when no role is.
 */
function checkApprovers(c: ApprovalConfig, problem: (field: Field, message: string) => void): void {
  const approvers = c.approvers as NonNullable<ApprovalConfig['approvers']>;
  for (const field of ['notify', 'escalate_to'] as const)
    c[field].forEach((r, i) => {
      const where: Field = [field, i, 'user_id'];
      if (r.user_id === undefined) problem(where, 'with `approvers`, a recipient needs the `user_id` it decides as');
      else if (!USER_ID_PATTERN.test(r.user_id))
        problem(where, `'${r.user_id}' is no user id (UA…): with \`approvers\` their link could never decide`);
      else if (approvers.roles.length === 0 && !approvers.users.includes(r.user_id))
        problem(where, `'${r.user_id}' is not among \`approvers.users\`: their link could never decide`);
    });
  if (approvers.roles.length > 0) return;
  const people = approvers.users.length;
  if (c.approvals_required > people)
    problem('approvals_required', `${c.approvals_required} approvals required of ${people} approvers`);
  if (c.decline_requires > people)
    problem('decline_requires', `${c.decline_requires} declines required of ${people} approvers`);
}

/**
 * A HumanInterventionNode's approval settings, checked at save time (422 naming the field) so a
 * run never meets a recipient it cannot message or a timer that cannot fire.
 */
export function checkApprovals(def: WorkflowDefinition): RuleIssue[] {
  const issues: RuleIssue[] = [];
  def.nodes.forEach((node, i) => {
    if (node.node_type !== 'HumanInterventionNode') return;
    const at = (...path: (string | number)[]) => ['nodes', i, 'config', ...path];
    const parsed = approvalConfig.safeParse(node.config);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({
          path: at(...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))),
          message: `HumanInterventionNode '${node.id}': ${issue.message}`,
          kind: 'value_error',
        });
      return;
    }
    const c = parsed.data;
    const problem = (field: Field, message: string) =>
      issues.push({
        path: at(...(typeof field === 'string' ? [field] : field)),
        message: `HumanInterventionNode '${node.id}': ${message}`,
        kind: 'value_error',
      });
    if (c.remind_after_seconds && c.notify.length === 0) problem('remind_after_seconds', 'a reminder needs `notify`');
    if (c.escalate_after_seconds && c.escalate_to.length === 0)
      problem('escalate_after_seconds', 'an escalation needs `escalate_to`');
    if (c.escalate_to.length > 0 && !c.escalate_after_seconds)
      problem('escalate_to', '`escalate_to` needs `escalate_after_seconds`');
    if (c.on_timeout && !(typeof c.timeout_seconds === 'number' && c.timeout_seconds > 0))
      problem('on_timeout', '`on_timeout` needs `timeout_seconds`');
    const everyone = [...c.notify, ...c.escalate_to];
    const recipients = new Set(everyone.map((r) => r.user_id ?? `${r.channel}:${r.to}`)).size;
    if (recipients > 0 && c.approvals_required > recipients)
      problem('approvals_required', `${c.approvals_required} approvals required of ${recipients} recipients`);
    if (recipients > 0 && c.decline_requires > recipients)
      problem('decline_requires', `${c.decline_requires} declines required of ${recipients} recipients`);
    if (c.approvers) checkApprovers(c, problem);
  });
  return issues;
}
