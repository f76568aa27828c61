import { DEFAULT_WORKSPACE, workspaceScope } from '../../db/workspace-scope';
import { randomUUID } from 'node:crypto';
import type { AuditNote } from '../../access/audit-note';
import { z } from '../../zod';
import { fromJsonText } from '../../db/json-text';
import type { Models, PauseDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import type { Values } from '../../db/values';
import { type ApprovalClaims, type ApprovalTokens } from '../../approvals/approval-token';
import { type ApprovalPlan, type PauseDecision, approvalPlan, mayDecide } from '../../engine/approvals';
import { notAnApprover } from '../../contracts/pauses';
import { PAUSE_ACTIONS } from '../../engine/statuses';
import { BadRequestError, ForbiddenError } from '../../errors';
import type { VersionById } from '../../runs/reader';
import type { PauseService } from './pauses.service';
import { ResumeRunRequest } from './pauses.schemas';
import type { Decider, Deciders } from './deciders';
import { type ApprovalView, approvalPage, noticePage } from './approval-page';

/** What the approval routes answer: a status and a page. */
export interface PageAnswer {
  status: number;
  html: string;
}

/** A decision's answer, and what the audit trail records of it once the link's signature holds. */
export interface DecisionAnswer extends PageAnswer {
  audit?: AuditNote;
}

/** The form the page posts (urlencoded). */
export const DecisionForm = z.object({
  nonce: z.string().min(1).max(200),
  action: z.enum(PAUSE_ACTIONS),
  comments: z.string().max(10_000).default(''),
  inputs: z
    .string()
    .max(64 * 1024)
    .default('{}'),
});
export type DecisionForm = z.output<typeof DecisionForm>;

const INVALID: PageAnswer = {
  status: 403,
  html: noticePage(
    'This link is not valid',
    'The link is damaged or was not issued by this server. Nothing was decided.',
  ),
};
const EXPIRED: PageAnswer = {
  status: 410,
  html: noticePage('This link has expired', 'The link can no longer decide anything. Nothing was decided.'),
};
const gone = (text: string): PageAnswer => ({ status: 410, html: noticePage('This link has been used', text) });
const refused = (text: string): PageAnswer => ({
  status: 403,
  html: noticePage('You may not decide this pause', `${text}. Nothing was decided.`),
});

type Node = { id: string; title?: string; config?: Record<string, unknown> };
type Open = {
  claims: ApprovalClaims;
  pause: PauseDoc;
  decisions: PauseDecision[];
  decider: Decider;
  node: Node | undefined;
  plan: ApprovalPlan;
  workflowId: string | null;
  version: { name: string } | null;
};
/** A link that cannot decide: why, and whose it was when its signature holds (an expired or used link). */
type Refused = PageAnswer & { claims?: ApprovalClaims };

/** The decision as the audit trail names it: by the link's recipient, on the link's pause. */
const decisionNote = (claims: ApprovalClaims, action: string): AuditNote => ({
  action: `pause.${action.toLowerCase()}`,
  target: { type: 'pause', id: claims.pauseId },
  actor: { user_id: claims.userId, via: 'approval_link' },
});

/**
 * Approval links, the api's side: a token is checked (signature, then expiry), then the pause it
 * names must still be open and undecided by its recipient. A decision goes as the very Update
 * `process_pause_action` sends, for the link's pause, as its recipient, through its channel.
 */
export function createApprovalLinks(deps: {
  models: Models;
  tokens: ApprovalTokens;
  pauses: PauseService;
  /** Who a link's recipient is (their username and role, for the node's `approvers`). */
  deciders: Pick<Deciders, 'ofRecipient'>;
  versionById: VersionById;
  runRecords: Pick<RunRepository, 'recordOf'>;
  /** Reads stored values back: the page shows a pause's input, never the references it is stored with. */
  values: Pick<Values, 'resolve'>;
}) {
  const { Pause, Workflow } = deps.models;

  async function open(token: string): Promise<Open | Refused> {
    const check = deps.tokens.check(token);
    if (check.status === 'invalid') return INVALID;
    const { claims } = check;
    if (check.status === 'expired') return { ...EXPIRED, claims };
    const pause = await Pause.findById(claims.pauseId).lean<PauseDoc>();
    // Signed, but naming a pause that is gone (its workflow deleted) or of another run: nothing to decide.
    if (!pause || pause.run_id !== claims.runId)
      return { ...gone('The run this link was for no longer exists.'), claims };
    if (pause.resume_time)
      return { ...gone('This pause has been decided already; the link can decide nothing more.'), claims };
    const decisions = fromJsonText<PauseDecision[]>(pause.decisions) ?? [];
    if (decisions.some((d) => d.user_id === claims.userId))
      return { ...gone('You have decided on this pause already.'), claims };
    const run = await deps.runRecords.recordOf(claims.runId);
    const version = run?.workflow_version_id ? await deps.versionById(run.workflow_version_id) : null;
    const node = fromJsonText<{ nodes?: Node[] }>(version?.definition)?.nodes?.find((n) => n.id === pause.node_id);
    const plan = approvalPlan(node?.config ?? {});
    // A link decides as its recipient: one the node's `approvers` leave out (or a disabled user) decides nothing.
    let decider: Decider;
    try {
      decider = await deps.deciders.ofRecipient(claims.userId, pause.workspace_id ?? DEFAULT_WORKSPACE);
    } catch (err) {
      if (err instanceof ForbiddenError) return { ...refused(err.message), claims };
      throw err;
    }
    if (!mayDecide(plan.approvers, decider)) return { ...refused(notAnApprover(claims.userId, pause.node_id)), claims };
    return { claims, pause, decisions, decider, node, plan, workflowId: run?.workflow_id ?? null, version };
  }

  async function view(found: Open, nonce: string, action: string, error?: string): Promise<ApprovalView> {
    const { claims, pause, decisions, node, plan, workflowId, version } = found;
    const workflow = workflowId ? await Workflow.findById(workflowId, { name: 1 }).lean<{ name: string }>() : null;
    return {
      workflowName: workflow?.name ?? version?.name ?? '',
      nodeTitle: node?.title ?? pause.node_id,
      nodeId: pause.node_id,
      runId: claims.runId,
      pauseMessage: pause.pause_message ?? '',
      inputData: await deps.values.resolve(fromJsonText(pause.input_data)),
      userId: claims.userId,
      expiresAt: new Date(claims.expiresAt * 1000),
      allowOverride: plan.allowOverride,
      quorum:
        plan.approvalsRequired > 1
          ? { required: plan.approvalsRequired, approvals: decisions.filter((d) => d.action !== 'DECLINE').length }
          : null,
      nonce,
      action,
      ...(error ? { error } : {}),
    };
  }

  /** The decision on a link that may still decide: checked as the page offers it, then sent as the Update. */
  async function decideOpen(found: Open, form: DecisionForm, nonce: string, action: string): Promise<PageAnswer> {
    const { claims } = found;
    const plan = await view(found, nonce, action);
    if (form.action === 'OVERRIDE' && !plan.allowOverride)
      return { status: 422, html: approvalPage({ ...plan, error: 'OVERRIDE is not offered for this pause.' }) };
    let inputs: unknown = {};
    if (form.action === 'OVERRIDE') {
      try {
        inputs = JSON.parse(form.inputs);
      } catch {
        return { status: 422, html: approvalPage({ ...plan, error: 'The override data is not valid JSON.' }) };
      }
    }
    const body = ResumeRunRequest.safeParse({
      inputs,
      user_id: claims.userId,
      action: form.action,
      comments: form.comments || null,
    });
    if (!body.success)
      return {
        status: 422,
        html: approvalPage({
          ...plan,
          error: `The override data must be a JSON object: ${body.error.issues[0]?.message}`,
        }),
      };
    try {
      // An Update of its own per POST: two POSTs of one link racing past the checks above are two
      // Updates, and the workflow takes one decision per person, refusing the other (410). One id
      // shared by both would let Temporal answer both with the first one's outcome, both 200.
      const updateId = `approval-link:${claims.pauseId}:${claims.userId}:${randomUUID()}`;
      const { status } = await deps.pauses.act(claims.runId, body.data, found.decider, updateId, {
        pauseId: claims.pauseId,
        channel: claims.channel,
      });
      const text =
        status === 202
          ? `Your ${form.action} is recorded and will be applied as soon as a worker is available.`
          : `Your ${form.action} is recorded. Thank you.`;
      return { status: 200, html: noticePage('Decision recorded', text) };
    } catch (err) {
      // The workflow refused it: decided meanwhile (by others, or by this very link), or not paused any more.
      if (err instanceof BadRequestError) return gone(`Nothing was decided: ${err.message}.`);
      // Its recipient left out of the approvers meanwhile (a role changed since the page opened).
      if (err instanceof ForbiddenError) return refused(err.message);
      throw err;
    }
  }

  /**
   * Runs `work` in the workspace of the pause a link's token names: the signed token is the only
   * credential, and the pause says whose it is. A token that names none runs it outside any.
   */
  async function inPauseWorkspace<T>(token: string, work: () => Promise<T>): Promise<T> {
    const check = deps.tokens.check(token);
    if (check.status === 'invalid') return work();
    const pause = await workspaceScope.unscoped(() =>
      Pause.findById(check.claims.pauseId, { workspace_id: 1 }).lean<Pick<PauseDoc, 'workspace_id'>>(),
    );
    return pause?.workspace_id ? workspaceScope.run(pause.workspace_id, work) : work();
  }

  return {
    /** The page for a link: its pause and the buttons, or why the link cannot decide. */
    page: (token: string, nonce: string, action: string): Promise<PageAnswer> =>
      inPauseWorkspace(token, async () => {
        const found = await open(token);
        if ('status' in found) return { status: found.status, html: found.html };
        return { status: 200, html: approvalPage(await view(found, nonce, action)) };
      }),

    /** A decision posted from the page (its nonce already checked). */
    decide: (token: string, form: DecisionForm, nonce: string, action: string): Promise<DecisionAnswer> =>
      inPauseWorkspace(token, async () => {
        const found = await open(token);
        const audit = found.claims ? { audit: decisionNote(found.claims, form.action) } : {};
        const answer = 'status' in found ? found : await decideOpen(found, form, nonce, action);
        return { status: answer.status, html: answer.html, ...audit };
      }),
  };
}

export type ApprovalLinks = ReturnType<typeof createApprovalLinks>;
