import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignatureSpec {
  algorithm: 'hmac-sha256' | 'hmac-sha1';
  prefix: string;
}

const DIGEST = { 'hmac-sha256': 'sha256', 'hmac-sha1': 'sha1' } as const;

/** `<prefix><lower-case hex HMAC of the raw body>`, as GitHub's `X-Hub-Signature-256` is. */
export function expectedSignature(spec: SignatureSpec, secret: string, raw: Buffer): string {
  return `${spec.prefix}${createHmac(DIGEST[spec.algorithm], secret).update(raw).digest('hex')}`;
}

/**
 * Whether the header holds the body's signature, compared in constant time (timingSafeEqual needs
 * equal lengths; a length differs only for a malformed header, which says nothing about the secret).
 */
export function signatureMatches(spec: SignatureSpec, secret: string, raw: Buffer, presented: string): boolean {
  const expected = Buffer.from(expectedSignature(spec, secret, raw), 'utf8');
  const given = Buffer.from(presented.trim(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
