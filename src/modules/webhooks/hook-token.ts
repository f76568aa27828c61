import { createHash, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../secrets/secret-box';
import type { StoredToken } from '../../db/webhook-triggers';

/** 192 random bits: the token is the hook's only credential. */
const TOKEN_BYTES = 24;

/** What a token is looked up by: its SHA-256 (the stored hash alone lets nobody call the hook). */
export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** The associated data of a trigger's sealed token and secret: each opens only as what it is, for its trigger. */
export const tokenSealName = (triggerId: string) => `spur-webhook-token:${triggerId}`;
export const secretSealName = (triggerId: string) => `spur-webhook-secret:${triggerId}`;

/** A new base64url token, stored as its hash and its seal. */
export function mintToken(box: SecretBox, triggerId: string): StoredToken {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { hash: tokenHash(token), sealed: box.seal(tokenSealName(triggerId), token) };
}

export const hookPath = (apiPrefix: string, token: string) => `${apiPrefix}/hooks/${token}`;
