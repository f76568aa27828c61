/**
 * Whether a literal text looks like a credential: what a workflow definition must not hold, since
 * every key holder, run record and export can read it (a node names a stored credential instead).
 * Heuristic by design: known token prefixes, `Scheme token` pairs, and long random-looking runs.
 * Template expressions are not literal text: `Bearer {{ in.token }}` holds no secret.
 */

/** Prefixes providers give their keys (OpenAI, Stripe, GitHub, Slack, AWS, Google, GitLab, SendGrid, JWTs, PEM). */
const KNOWN_TOKENS: readonly RegExp[] = [
  /\bsk[-_](live_|test_|proj-|ant-)?[A-Za-z0-9_-]{8,}/,
  /\b[pr]k_(live|test)_[A-Za-z0-9]{8,}/,
  /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/,
  /\bgithub_pat_[A-Za-z0-9_]{16,}/,
  /\bxox[abprs]-[A-Za-z0-9-]{8,}/,
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bAIza[0-9A-Za-z_-]{30,}/,
  /\bya29\.[A-Za-z0-9_-]{8,}/,
  /\bglpat-[A-Za-z0-9_-]{16,}/,
  /\bSG\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

/** `Bearer abc…`, `Basic dXNl…`, `Token …`: an authorization scheme followed by a literal credential. */
const SCHEME_CREDENTIAL = /\b(bearer|basic|token|bot|apikey|digest)\s+[A-Za-z0-9+/=._~-]{8,}/i;

/** A run of token characters long enough to be a key. */
const LONG_RUN = /[A-Za-z0-9+/=_-]{24,}/g;

const TEMPLATE_PARTS = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/g;

/** The literal text of a template: its expressions, tags and comments left out. */
export function literalText(template: string): string {
  return template.replace(TEMPLATE_PARTS, ' ');
}

/** Bits per character of `text`'s character distribution. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Random-looking: letters and digits mixed, and spread over many characters (not a word or a path). */
function looksRandom(run: string): boolean {
  return /[0-9]/.test(run) && /[A-Za-z]/.test(run) && entropy(run) >= 3.5;
}

/** Why `template`'s literal text looks like a credential, or null when it does not. */
export function secretShape(template: string): string | null {
  const text = literalText(template);
  if (KNOWN_TOKENS.some((pattern) => pattern.test(text))) return 'it holds a known API key or token format';
  if (SCHEME_CREDENTIAL.test(text)) return 'it holds an authorization scheme followed by a literal credential';
  if ((text.match(LONG_RUN) ?? []).some(looksRandom)) return 'it holds a long random-looking token';
  return null;
}
