import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ApprovalChannel } from '../engine/approvals';

/**
 * An approval link's token: `<payload>.<mac>`, both base64url. The payload is JSON naming the run,
 * the pause, the recipient (the `resume_user_id` their decision carries), the channel the link
 * went out through and its expiry (unix seconds); the mac is HMAC-SHA256 of `v1.<payload>` under
 * a key derived from SPUR_SECRET_KEY (the api verifies what a worker minted). The token is the
 * credential: no key or session is needed with it, so it says exactly what it may decide and
 * until when. Single use is the pause's own rule: one decision per person per pause.
 */
export interface ApprovalClaims {
  runId: string;
  pauseId: string;
  userId: string;
  channel: ApprovalChannel;
  /** Unix seconds. */
  expiresAt: number;
}

export type TokenCheck =
  { status: 'valid'; claims: ApprovalClaims } | { status: 'expired'; claims: ApprovalClaims } | { status: 'invalid' };

/** A token longer than this is no token of ours (its payload has a few ids). */
const MAX_TOKEN_CHARS = 2048;
const B64URL = /^[A-Za-z0-9_-]+$/;

export function approvalTokens(secretKey: Buffer, clock: () => number = Date.now) {
  const key = createHmac('sha256', secretKey).update('spur approval link v1').digest();
  const macOf = (payload: string) => createHmac('sha256', key).update(`v1.${payload}`).digest();

  return {
    mint(claims: ApprovalClaims): string {
      const payload = Buffer.from(
        JSON.stringify({
          r: claims.runId,
          p: claims.pauseId,
          u: claims.userId,
          c: claims.channel,
          e: claims.expiresAt,
        }),
      ).toString('base64url');
      return `${payload}.${macOf(payload).toString('base64url')}`;
    },

    /** Signature first (a tampered token says nothing else), then expiry. */
    check(token: string): TokenCheck {
      if (token.length > MAX_TOKEN_CHARS) return { status: 'invalid' };
      const parts = token.split('.');
      if (parts.length !== 2 || !parts.every((p) => B64URL.test(p))) return { status: 'invalid' };
      const [payload, mac] = parts as [string, string];
      const given = Buffer.from(mac, 'base64url');
      const expected = macOf(payload);
      // Base64url has several spellings of the same bytes (the last character's spare bits): only ours counts.
      if (given.length !== expected.length || !timingSafeEqual(given, expected) || given.toString('base64url') !== mac)
        return { status: 'invalid' };
      const claims = claimsOf(payload);
      if (!claims) return { status: 'invalid' };
      return claims.expiresAt * 1000 <= clock() ? { status: 'expired', claims } : { status: 'valid', claims };
    },
  };
}

export type ApprovalTokens = ReturnType<typeof approvalTokens>;

function claimsOf(payload: string): ApprovalClaims | null {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const { r, p, u, c, e } = raw as Record<string, unknown>;
  if (typeof r !== 'string' || typeof p !== 'string' || typeof u !== 'string' || typeof e !== 'number') return null;
  if (c !== 'slack' && c !== 'email' && c !== 'webhook') return null;
  return { runId: r, pauseId: p, userId: u, channel: c, expiresAt: e };
}
