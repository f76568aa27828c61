// Prints the digest to put in SPUR_API_KEY_HASHES for a key (argument, or a fresh random key).
// Usage: tsx scripts/hash-api-key.ts [key]
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../src/http/api-keys';

const key = process.argv[2] ?? `spur_${randomBytes(24).toString('base64url')}`;
if (!process.argv[2]) console.log(`key:  ${key}   (give this to clients; it is not stored)`);
console.log(`hash: ${hashApiKey(key)}   (put this in SPUR_API_KEY_HASHES)`);
