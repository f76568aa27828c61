import { z } from 'zod';
import type { Models } from '../../db/models';
import { BadRequestError, notFound, RequestValidationError } from '../../errors';
import { toValidationDetails } from '../../http/validation-details';
import { createCredentials } from '../../secrets/credentials';
import { maskSecret, type SecretBox } from '../../secrets/secret-box';
import { findParameter, KNOWN_VARIABLES, SETTABLE_VARIABLES } from './providers';

/** A name a writer accepts: its 422 names the whole allowed set. */
export const SettableName = z.enum(SETTABLE_VARIABLES);
const NamedSetting = z.object({ name: SettableName });

/** PySpur's env-mgmt over the stored credentials: known names only, passwords masked on read. */
export function createEnvService(models: Models, box: SecretBox, clock: () => Date = () => new Date()) {
  const credentials = createCredentials(models, box, clock);

  function known(name: string) {
    const param = findParameter(name);
    if (!param) throw notFound.key();
    return param;
  }

  return {
    reveal: credentials.reveal,
    names: () => [...KNOWN_VARIABLES],
    async get(name: string) {
      const param = known(name);
      const value = (await credentials.stored(name)) ?? '';
      return { name, value: param.type === 'password' ? maskSecret(value) : value };
    },
    async set(name: string, value: string | null | undefined) {
      // The route's schema refuses other names already; this holds for every other writer too.
      const checked = NamedSetting.safeParse({ name });
      if (!checked.success)
        throw new RequestValidationError(toValidationDetails(checked.error.issues, 'body', { name }));
      if (!value) throw new BadRequestError('Value is required');
      await credentials.store(name, value);
      return { message: `Key '${name}' set successfully` };
    },
    async remove(name: string) {
      known(name);
      if (!(await credentials.remove(name))) throw notFound.key();
      return { message: `Key '${name}' deleted successfully` };
    },
  };
}

export type EnvService = ReturnType<typeof createEnvService>;
