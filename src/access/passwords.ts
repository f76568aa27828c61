import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Passwords are kept as scrypt hashes: memory-hard (32 MiB and about 0.1 CPU-s per guess here), so
 * a stolen database is slow to attack on GPUs. Node ships scrypt; no native dependency is needed.
 * Stored as `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url), so the cost can rise later and
 * old hashes still verify.
 */
const LOG2_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2n;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_BYTES, { N, r, p, maxmem: 256 * N * r }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, LOG2_N, R, P);
  return ['scrypt', LOG2_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash of no password anyone has: checked when the user is unknown, so timing does not tell. */
let decoy: Promise<string> | undefined;

/** True when `password` matches `stored`; an unknown user (`stored` null) costs the same and fails. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const hash = stored ?? (await (decoy ??= hashPassword(randomBytes(24).toString('base64url'))));
  const [scheme, log2n, r, p, salt, key] = hash.split('$');
  // Bounded, so a hash edited in the database cannot make one sign-in take minutes.
  if (scheme !== 'scrypt' || !salt || !key || !(Number(log2n) <= 20 && Number(r) <= 16 && Number(p) <= 4)) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(log2n), Number(r), Number(p));
  return stored !== null && actual.length === expected.length && timingSafeEqual(actual, expected);
}
