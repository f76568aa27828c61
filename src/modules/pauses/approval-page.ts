import { escapeHtml } from '../../web-ui/pages';

/**
 * The approval page (`/approve/{token}`): Spur's own small HTML, no script at all. Everything it
 * shows comes from the run (the pause message, the input data, names) and may be hostile, so every
 * value is escaped as text; the page's Content-Security-Policy (approval.routes.ts) forbids scripts
 * anyway.
 */

export interface ApprovalView {
  workflowName: string;
  nodeTitle: string;
  nodeId: string;
  runId: string;
  pauseMessage: string;
  inputData: unknown;
  userId: string;
  expiresAt: Date;
  allowOverride: boolean;
  /** A decision needs several people: how many approvals, how many so far. */
  quorum: { required: number; approvals: number } | null;
  /** Double-submit nonce: the same value is in the page's cookie. */
  nonce: string;
  /** The form posts back to the page's own path. */
  action: string;
  /** Shown above the form when a submission was refused (bad JSON). */
  error?: string;
}

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1f2328; margin: 0; padding: 2rem 1rem; }
  main { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 1.5rem 2rem; max-width: 46rem; margin: 0 auto; }
  h1 { font-size: 1.3rem; margin-top: 0; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
  dt { font-weight: 600; }
  pre { background: #eff1f3; padding: .8rem; border-radius: 6px; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-word; }
  .message { white-space: pre-wrap; border-left: 4px solid #1f6feb; padding-left: .8rem; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  textarea { width: 100%; box-sizing: border-box; font: inherit; padding: .5rem; border: 1px solid #d0d7de; border-radius: 6px; }
  .buttons { display: flex; gap: .6rem; margin-top: 1rem; flex-wrap: wrap; }
  button { padding: .55rem 1.2rem; border: 0; border-radius: 6px; color: #fff; font: inherit; cursor: pointer; }
  .approve { background: #1a7f37; } .decline { background: #cf222e; } .override { background: #8250df; }
  .error { color: #cf222e; } .muted { color: #59636e; font-size: .9rem; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

export function approvalPage(v: ApprovalView): string {
  const quorum = v.quorum
    ? `<p class="muted">This decision needs ${v.quorum.required} approvals; ${v.quorum.approvals} so far.</p>`
    : '';
  const override = v.allowOverride
    ? `<label for="inputs">Override the data (a JSON object; used with OVERRIDE)</label>
  <textarea id="inputs" name="inputs" rows="6">{}</textarea>`
    : '';
  return page(
    `Decision needed: ${v.workflowName}`,
    `<h1>Decision needed: ${escapeHtml(v.workflowName)}</h1>
<dl>
  <dt>Node</dt><dd>${escapeHtml(v.nodeTitle)} (${escapeHtml(v.nodeId)})</dd>
  <dt>Run</dt><dd>${escapeHtml(v.runId)}</dd>
  <dt>Deciding as</dt><dd>${escapeHtml(v.userId)}</dd>
  <dt>Link expires</dt><dd>${escapeHtml(v.expiresAt.toISOString())}</dd>
</dl>
<p class="message" id="pause-message">${escapeHtml(v.pauseMessage)}</p>
<h2>Input data</h2>
<pre id="input-data">${escapeHtml(json(v.inputData))}</pre>
${quorum}${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(v.action)}">
  <input type="hidden" name="nonce" value="${escapeHtml(v.nonce)}">
  <label for="comments">Comments</label>
  <textarea id="comments" name="comments" rows="3" maxlength="10000"></textarea>
  ${override}
  <div class="buttons">
    <button class="approve" type="submit" name="action" value="APPROVE">APPROVE</button>
    <button class="decline" type="submit" name="action" value="DECLINE">DECLINE</button>
    ${v.allowOverride ? '<button class="override" type="submit" name="action" value="OVERRIDE">OVERRIDE</button>' : ''}
  </div>
</form>
<p class="muted">This link is yours alone and decides once.</p>`,
  );
}

/** A page that only says something: the link is invalid, expired or used, or the decision is recorded. */
export function noticePage(title: string, text: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p id="notice">${escapeHtml(text)}</p>`);
}
