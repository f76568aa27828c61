import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/settings';

/**
 * The key that seals provider secrets: `SPUR_SECRET_KEY` (base64 of 32 bytes) when given, as in
 * production; otherwise one generated on first start and kept in the data folder, as in dev.
 * api and worker read the same key.
 */
export function loadSecretKey(config: Pick<Config, 'secretKey' | 'dataDir'>): Buffer {
  if (config.secretKey) return decode(config.secretKey, 'SPUR_SECRET_KEY');
  const file = path.resolve(config.dataDir, 'secret.key');
  try {
    return decode(readFileSync(file, 'utf8').trim(), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // 'wx' fails if another process created the file meanwhile; then that key wins.
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return decode(readFileSync(file, 'utf8').trim(), file);
}

function decode(text: string, source: string): Buffer {
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error(`${source} must hold base64 of exactly 32 bytes`);
  return key;
}
