import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { noteAudit } from '../../access/audit-note';
import { inboundCallbackSignal } from '../../contracts/inbound-callback-contract';
import { runWorkflowId } from '../../contracts/workflow-names';
import type { InboundCallbacks } from '../../db/inbound-callbacks';
import { fromJsonText } from '../../db/json-text';
import type { RunDoc, WorkflowVersionDoc } from '../../db/models';
import { workspaceScope } from '../../db/workspace-scope';
import { isFinalStatus } from '../../engine/statuses';
import { BadRequestError, NotFoundError, PayloadTooLargeError, RequestValidationError } from '../../errors';
import { signatureMatches } from '../webhooks/hook-signature';
import type { InboundCallbackClaims, InboundCallbackTokens } from '../../secrets/inbound-callback-token';
import type { CallbackAnswer } from './callback-answer';

/** The header a callback's HMAC comes in, as run callbacks sign theirs (docs/integrations.md). */
export const CALLBACK_SIGNATURE = { header: 'x-spur-signature', algorithm: 'hmac-sha256', prefix: 'sha256=' } as const;

export interface InboundCallbackDeps {
  tokens: InboundCallbackTokens;
  callbacks: InboundCallbacks;
  runOf: (runId: string) => Promise<RunDoc | null>;
  versionOf: (versionId: string) => Promise<WorkflowVersionDoc | null>;
  temporal: () => Client;
  workflowIdPrefix: string;
  maxBodyBytes: number;
}

/** One answer for a token we never minted and one whose run or node is gone: nothing tells them apart. */
const unknownCallback = () => new NotFoundError('Not Found', 'CALLBACK_NOT_FOUND');
const gone = (detail: string): CallbackAnswer => ({ status: 410, body: { detail } });

type WaitingNode = { id: string; node_type?: string; parent_id?: string | null; config?: Record<string, unknown> };

/**
 * `POST /callbacks/{token}`: the token is checked without a lookup (404 for one we never minted),
 * then, in the run's workspace: the body read within its limit (413), the run and its node (404),
 * the signature when the node has a secret (401, nothing changed), the body as a JSON object
 * (422), the run still going (410), the claim that makes the callback used (410 when it was used
 * or timed out), and the signal to the run's workflow (410 when the workflow has ended).
 */
export function createInboundCallbackService(deps: InboundCallbackDeps) {
  async function readBody(ctx: Context): Promise<Buffer> {
    try {
      return await getRawBody(ctx.req, { limit: deps.maxBodyBytes, length: ctx.request.length });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(
          `Request body exceeds ${deps.maxBodyBytes} bytes (SPUR_INBOUND_CALLBACK_MAX_BYTES)`,
        );
      throw new BadRequestError(`Could not read the request body: ${(err as Error).message}`);
    }
  }

  async function waitingNodeOf(run: RunDoc, nodeId: string): Promise<WaitingNode | null> {
    const version = run.workflow_version_id ? await deps.versionOf(run.workflow_version_id) : null;
    const definition = fromJsonText<{ nodes?: WaitingNode[] }>(version?.definition);
    const node = definition?.nodes?.find((n) => n.id === nodeId);
    return node?.node_type === 'WaitForCallbackNode' ? node : null;
  }

  function jsonObjectOf(raw: Buffer): Record<string, unknown> {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new RequestValidationError([
        { type: 'model_attributes_type', loc: ['body'], msg: 'The body must be a JSON object', input: null },
      ]);
    return body as Record<string, unknown>;
  }

  async function deliverTo(ctx: Context, claims: InboundCallbackClaims): Promise<CallbackAnswer> {
    const { runId, nodeId } = claims;
    noteAudit(ctx.state, {
      action: 'callback.deliver',
      target: { type: 'run', id: runId },
      actor: { via: 'callback' },
    });
    const raw = await readBody(ctx);
    const run = await deps.runOf(runId);
    const node = run ? await waitingNodeOf(run, nodeId) : null;
    if (!run || !node) throw unknownCallback();
    const secret = typeof node.config?.secret === 'string' ? node.config.secret : '';
    const presented = ctx.get(CALLBACK_SIGNATURE.header);
    if (secret && !(presented && signatureMatches(CALLBACK_SIGNATURE, secret, raw, presented)))
      return { status: 401, body: { detail: `Signature missing or wrong (header ${CALLBACK_SIGNATURE.header})` } };
    const body = jsonObjectOf(raw);
    if (isFinalStatus(run.status) && run.end_time) return gone(`Run ${runId} has ended (${run.status})`);
    if (!(await deps.callbacks.deliver(runId, nodeId, body)))
      return gone(`The callback of node '${nodeId}' was used already, or its wait timed out`);
    try {
      await deps
        .temporal()
        .workflow.getHandle(runWorkflowId(runId, deps.workflowIdPrefix))
        .signal(inboundCallbackSignal, { nodeId, body });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return gone(`Run ${runId} has ended`);
      // Not sent (Temporal unavailable): the callback stays open, so the caller may send it again.
      await deps.callbacks.release(runId, nodeId);
      throw err;
    }
    return { status: 200, body: { accepted: true, run_id: runId, node_id: nodeId } };
  }

  return async function deliver(ctx: Context, token: string): Promise<CallbackAnswer> {
    const claims = deps.tokens.check(token);
    if (!claims) throw unknownCallback();
    return workspaceScope.run(claims.workspaceId, () => deliverTo(ctx, claims));
  };
}

export type InboundCallbackDelivery = ReturnType<typeof createInboundCallbackService>;
