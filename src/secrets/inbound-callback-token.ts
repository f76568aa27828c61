import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A WaitForCallbackNode's callback token: `<payload>.<mac>`, both base64url. The payload names the
 * workspace, the run and the node; the mac is HMAC-SHA256 of `v1.<payload>` under a key derived
 * from SPUR_SECRET_KEY. A worker mints it when a template asks for `callback_url(…)`; the api
 * checks it with no lookup, so a token nobody minted is refused before the database is asked. It
 * is stored nowhere (nor in Temporal's history, unless a node's output shows it): single use is
 * the callback's record (src/db/inbound-callbacks.ts).
 */
export interface InboundCallbackClaims {
  workspaceId: string;
  runId: string;
  nodeId: string;
}

/** Longer than any token of ours (its payload has three short ids). */
const MAX_TOKEN_CHARS = 1024;
const B64URL = /^[A-Za-z0-9_-]+$/;

export function inboundCallbackTokens(secretKey: Buffer) {
  const key = createHmac('sha256', secretKey).update('spur inbound callback v1').digest();
  const macOf = (payload: string) => createHmac('sha256', key).update(`v1.${payload}`).digest();

  return {
    mint(claims: InboundCallbackClaims): string {
      const payload = Buffer.from(
        JSON.stringify({ w: claims.workspaceId, r: claims.runId, n: claims.nodeId }),
      ).toString('base64url');
      return `${payload}.${macOf(payload).toString('base64url')}`;
    },

    /** The claims of a token we minted; null for anything else (malformed, tampered, too long). */
    check(token: string): InboundCallbackClaims | null {
      if (token.length > MAX_TOKEN_CHARS) return null;
      const parts = token.split('.');
      if (parts.length !== 2 || !parts.every((p) => B64URL.test(p))) return null;
      const [payload, mac] = parts as [string, string];
      const given = Buffer.from(mac, 'base64url');
      const expected = macOf(payload);
      // Base64url has several spellings of the same bytes (the last character's spare bits): only ours counts.
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || given.toString('base64url') !== mac)
        return null;
      return claimsOf(payload);
    },
  };
}

export type InboundCallbackTokens = ReturnType<typeof inboundCallbackTokens>;

function claimsOf(payload: string): InboundCallbackClaims | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (parsed === null || typeof parsed !== 'object') return null;
    const { w, r, n } = parsed as Record<string, unknown>;
    if (typeof w !== 'string' || typeof r !== 'string' || typeof n !== 'string') return null;
    return { workspaceId: w, runId: r, nodeId: n };
  } catch {
    return null;
  }
}

/** The URL a caller posts to: the installation's public base (SPUR_PUBLIC_URL), as approval links use. */
export const inboundCallbackUrl = (publicUrl: string, token: string) => `${publicUrl}/api/callbacks/${token}`;
