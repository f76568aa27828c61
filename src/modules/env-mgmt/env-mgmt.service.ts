import { z } from 'zod';
import type { Models } from '../../db/models';
import { BadRequestError, notFound, RequestValidationError } from '../../errors';
import { toValidationDetails } from '../../http/validation-details';
import { findParameter, KNOWN_VARIABLES, SETTABLE_VARIABLES } from './providers';
import { KEY_BASES, basesText, normalizedBase } from '../../nodes/credential-bases';
import { maskSecret, type SecretBox } from './secret-box';

/** A name a writer accepts: its 422 names the whole allowed set. */
export const SettableName = z.enum(SETTABLE_VARIABLES);
const NamedSetting = z.object({ name: SettableName });

/** Provider settings kept encrypted in MongoDB; clear text leaves only through `reveal` (for nodes). */
export function createEnvService(models: Models, box: SecretBox, clock: () => Date = () => new Date()) {
  const { EnvVar } = models;

  function known(name: string) {
    const param = findParameter(name);
    if (!param) throw notFound.key();
    return param;
  }

  /** The current values of base settings, compared as a credential records them. */
  async function basesNow(bases: readonly string[]): Promise<string> {
    const docs = await Promise.all(bases.map((base) => EnvVar.findById(base).lean()));
    const values = new Map(docs.flatMap((d) => (d ? [[d._id, normalizedBase(box.open(d._id, d.ciphertext))] as const] : [])));
    return basesText(bases, (base) => values.get(base) ?? '');
  }

  /** A setting's clear text; a credential whose base has changed since it was entered reads as unset. */
  async function reveal(name: string): Promise<string | undefined> {
    const doc = await EnvVar.findById(name).lean();
    if (!doc) return undefined;
    const bases = KEY_BASES.get(name);
    if (bases && (doc.entered_for ?? basesText(bases, () => '')) !== (await basesNow(bases))) return undefined;
    return box.open(name, doc.ciphertext);
  }

  return {
    reveal,
    names: () => [...KNOWN_VARIABLES],
    async get(name: string) {
      const param = known(name);
      const value = (await reveal(name)) ?? '';
      return { name, value: param.type === 'password' ? maskSecret(value) : value };
    },
    async set(name: string, value: string | null | undefined) {
      // The route's schema refuses other names already; this holds for every other writer too.
      const checked = NamedSetting.safeParse({ name });
      if (!checked.success) throw new RequestValidationError(toValidationDetails(checked.error.issues, 'body', { name }));
      if (!value) throw new BadRequestError('Value is required');
      const bases = KEY_BASES.get(name);
      const enteredFor = bases ? { entered_for: await basesNow(bases) } : {};
      await EnvVar.updateOne({ _id: name }, { $set: { ciphertext: box.seal(name, value), updated_at: clock(), ...enteredFor } }, { upsert: true });
      return { message: `Key '${name}' set successfully` };
    },
    async remove(name: string) {
      known(name);
      const { deletedCount } = await EnvVar.deleteOne({ _id: name });
      if (!deletedCount) throw notFound.key();
      return { message: `Key '${name}' deleted successfully` };
    },
  };
}

export type EnvService = ReturnType<typeof createEnvService>;
