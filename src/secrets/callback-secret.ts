import type { SecretBox } from './secret-box';

/** The associated data of a sealed callback secret: it opens as nothing else. */
const PURPOSE = 'spur-run-callback-secret';

export const sealCallbackSecret = (box: SecretBox, secret: string) => box.seal(PURPOSE, secret);
export const openCallbackSecret = (box: SecretBox, sealed: string) => box.open(PURPOSE, sealed);
