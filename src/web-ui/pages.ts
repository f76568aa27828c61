/** Spur's own small HTML pages next to PySpur's UI: the login form and the "no UI" notice. */

/** Text as HTML text or attribute value: the five characters markup is made of, as character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>${head}
<style>
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1f2328; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 2rem; width: min(26rem, 90vw); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input[type=password], input[type=text] { width: 100%; box-sizing: border-box; padding: .55rem; border: 1px solid #d0d7de; border-radius: 6px; font: inherit; }
  button { margin-top: 1rem; padding: .55rem 1.2rem; border: 0; border-radius: 6px; background: #1f6feb; color: #fff; font: inherit; cursor: pointer; }
  .error { color: #cf222e; }
  a.button { display: inline-block; padding: .55rem 1.2rem; border-radius: 6px; background: #24292f; color: #fff; text-decoration: none; }
  form + form { margin-top: 1.5rem; border-top: 1px solid #d0d7de; }
  code { background: #eff1f3; padding: .1rem .3rem; border-radius: 4px; }
</style></head>
<body><main>${body}</main></body></html>`;
}

/** A "Sign in with …" button of the login page (an OpenID provider). */
export interface SignInLink {
  label: string;
  href: string;
}

/** A sign-in link that brings the browser back to `next` (a path of this server) once signed in. */
function withNext(href: string, next: string): string {
  return next === '/' ? href : `${href}${href.includes('?') ? '&' : '?'}next=${encodeURIComponent(next)}`;
}

export function loginPage(next: string, error?: string, links: readonly SignInLink[] = []): string {
  const hidden = `<input type="hidden" name="next" value="${escapeHtml(next)}">`;
  return page(
    'Sign in to Spur',
    `<h1>Sign in to Spur</h1>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
${links.map((l) => `<p><a class="button" href="${escapeHtml(withNext(l.href, next))}">${escapeHtml(l.label)}</a></p>`).join('\n')}
<form method="post" action="/login" aria-label="Sign in with a password">
  ${hidden}
  <label for="username">Username</label>
  <input id="username" name="username" type="text" autocomplete="username" required autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
<form method="post" action="/login" aria-label="Sign in with an API key">
  ${hidden}
  <p>Or with an API key: the browser keeps a session cookie, not the key itself.</p>
  <label for="api_key">API key</label>
  <input id="api_key" name="api_key" type="password" autocomplete="off" required>
  <button type="submit">Sign in with the key</button>
</form>`,
  );
}

/**
 * The answer of a sign-in that came back from another site (an OpenID provider): the browser sends
 * the new SameSite=Strict session cookie only on a navigation this server's own page starts, so
 * this page moves on to `next` itself instead of a redirect (which would arrive without it).
 */
export function signedInPage(next: string): string {
  return page(
    'Signed in to Spur',
    `<h1>Signed in</h1>
<p><a href="${escapeHtml(next)}">Continue to Spur</a></p>`,
    `<meta http-equiv="refresh" content="0;url=${escapeHtml(next)}">`,
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
