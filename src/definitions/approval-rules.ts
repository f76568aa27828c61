import { z } from 'zod';
import { approvalFields } from '../nodes/logic/human-intervention-node';
import type { WorkflowDefinition } from './definition.schema';
import type { RuleIssue } from './definition-rules';

const approvalConfig = z.looseObject({ ...approvalFields, timeout_seconds: z.unknown().optional() });

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
    const problem = (field: string, message: string) =>
      issues.push({ path: at(field), message: `HumanInterventionNode '${node.id}': ${message}`, kind: 'value_error' });
    if (c.remind_after_seconds && c.notify.length === 0) problem('remind_after_seconds', 'a reminder needs `notify`');
    if (c.escalate_after_seconds && c.escalate_to.length === 0)
      problem('escalate_after_seconds', 'an escalation needs `escalate_to`');
    if (c.escalate_to.length > 0 && !c.escalate_after_seconds)
      problem('escalate_to', '`escalate_to` needs `escalate_after_seconds`');
    if (c.on_timeout && !(typeof c.timeout_seconds === 'number' && c.timeout_seconds > 0))
      problem('on_timeout', '`on_timeout` needs `timeout_seconds`');
    const recipients = new Set([...c.notify, ...c.escalate_to].map((r) => r.user_id ?? `${r.channel}:${r.to}`)).size;
    if (recipients > 0 && c.approvals_required > recipients)
      problem('approvals_required', `${c.approvals_required} approvals required of ${recipients} recipients`);
    if (recipients > 0 && c.decline_requires > recipients)
      problem('decline_requires', `${c.decline_requires} declines required of ${recipients} recipients`);
  });
  return issues;
}
