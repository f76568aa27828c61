import { z } from 'zod';
import type { Models } from '../../db/models';
import { BadRequestError, notFound, RequestValidationError } from '../../http/errors';
import { toValidationDetails } from '../../http/validation-details';
import { findParameter, KNOWN_VARIABLES, SETTABLE_VARIABLES } from './providers';
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

  async function reveal(name: string): Promise<string | undefined> {
    const doc = await EnvVar.findById(name).lean();
    return doc ? box.open(name, doc.ciphertext) : undefined;
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
      await EnvVar.updateOne({ _id: name }, { $set: { ciphertext: box.seal(name, value), updated_at: clock() } }, { upsert: true });
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
