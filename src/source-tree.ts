import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The folder Spur runs from: the nearest one above this file that holds its package.json (the
 * checkout when run from source, /app in the image, where this file is dist/src/source-tree.js).
 */
function findSourceTree(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}

export const SOURCE_TREE = findSourceTree(__dirname);
