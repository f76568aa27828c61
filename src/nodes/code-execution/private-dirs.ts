import type { PrivateDir } from '../../config/settings';
import { isInside, safeRealpath } from './python-environment';

/**
 * The private folders a sandbox would show: each inside (or equal to) a directory it binds
 * read-only, with that directory. The binds are real paths; so are the folders here, where they exist.
 */
export function exposedPrivateDirs(
  readable: string[],
  privateDirs: readonly PrivateDir[],
): { dir: PrivateDir; root: string }[] {
  return privateDirs.flatMap((dir) => {
    const real = safeRealpath(dir.path);
    const root = readable.find((r) => isInside(real, r));
    return root === undefined ? [] : [{ dir, root }];
  });
}
