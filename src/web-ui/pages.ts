/** Spur's own small HTML pages next to PySpur's UI: the login form and the "no UI" notice. */

/** Text as HTML text or attribute value: the five characters markup is made of, as character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1f2328; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 2rem; width: min(26rem, 90vw); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input[type=password] { width: 100%; box-sizing: border-box; padding: .55rem; border: 1px solid #d0d7de; border-radius: 6px; font: inherit; }
  button { margin-top: 1rem; padding: .55rem 1.2rem; border: 0; border-radius: 6px; background: #1f6feb; color: #fff; font: inherit; cursor: pointer; }
  .error { color: #cf222e; }
  code { background: #eff1f3; padding: .1rem .3rem; border-radius: 4px; }
</style></head>
<body><main>${body}</main></body></html>`;
}

export function loginPage(next: string, error?: string): string {
  return page(
    'Sign in to Spur',
    `<h1>Sign in to Spur</h1>
<p>This Spur server needs an API key. The browser keeps it as a session cookie, not the key itself.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="next" value="${escapeHtml(next)}">
  <label for="api_key">API key</label>
  <input id="api_key" name="api_key" type="password" autocomplete="current-password" required autofocus>
  <button type="submit">Sign in</button>
</form>`,
  );
}

export function unavailablePage(reason: string): string {
  return page(
    'Spur',
    `<h1>Spur is running, without its web UI</h1>
<p>${escapeHtml(reason)}</p>
<p>The API is at <a href="/api/docs"><code>/api</code></a> (browsable docs at <code>/api/docs</code>).</p>`,
  );
}
