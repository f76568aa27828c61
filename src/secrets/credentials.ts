import type { Models } from '../db/models';
import { settingsCache } from '../db/settings-cache';
import { DEFAULT_WORKSPACE, workspaceScope } from '../db/workspace-scope';
import { KEY_BASES, basesText, normalizedBase } from '../nodes/credential-bases';
import type { SecretBox } from './secret-box';

/**
 * Where a setting of the current workspace is stored, and what its ciphertext is bound to: the bare
 * name in `default` (as before workspaces, so nothing moves), `<workspace>:<name>` elsewhere. The
 * binding means a ciphertext copied to another workspace's id does not open.
 */
function settingId(name: string): string {
  const workspaceId = workspaceScope.current() ?? DEFAULT_WORKSPACE;
  return workspaceId === DEFAULT_WORKSPACE ? name : `${workspaceId}:${name}`;
}

/**
 * The provider settings and credentials kept encrypted in MongoDB (collection `env_vars`): the one
 * module that writes them. Each workspace has its own (keys and bases alike): a run reads those of
 * the workspace it runs in, whoever started it. A credential remembers the base URL settings it was
 * entered for; once one differs it reads as unset, so changing a base never sends the old key to
 * the new host.
 */
export function createCredentials(models: Models, box: SecretBox, clock: () => Date = () => new Date()) {
  const { EnvVar } = models;
  const cache = settingsCache(models);

  /** The current values of base settings, compared as a credential records them. */
  async function basesNow(bases: readonly string[]): Promise<string> {
    const docs = await Promise.all(bases.map((base) => EnvVar.findById(settingId(base)).lean()));
    const values = new Map(
      docs.flatMap((d, i) => (d ? [[bases[i] as string, normalizedBase(box.open(d._id, d.ciphertext))] as const] : [])),
    );
    return basesText(bases, (base) => values.get(base) ?? '');
  }

  /** A setting's clear text as stored now; a credential whose base has changed since it was entered reads as unset. */
  async function stored(name: string): Promise<string | undefined> {
    const id = settingId(name);
    const doc = await EnvVar.findById(id).lean();
    if (!doc) return undefined;
    const bases = KEY_BASES.get(name);
    if (bases && (doc.entered_for ?? basesText(bases, () => '')) !== (await basesNow(bases))) return undefined;
    return box.open(id, doc.ciphertext);
  }

  return {
    /**
     * A setting's clear text for the calls nodes make, kept in this process's memory until any
     * setting changes (settings-cache.ts).
     */
    reveal(name: string): Promise<string | undefined> {
      // The cache keys by workspace itself: the bare name, as settingId's workspace prefix would repeat it.
      return cache.get('credential', name, () => stored(name));
    },
    /** The same, read from MongoDB: what the API shows. */
    stored,
    async store(name: string, value: string): Promise<void> {
      const bases = KEY_BASES.get(name);
      const enteredFor = bases ? { entered_for: await basesNow(bases) } : {};
      const id = settingId(name);
      await EnvVar.updateOne(
        { _id: id },
        { $set: { ciphertext: box.seal(id, value), updated_at: clock(), ...enteredFor } },
        { upsert: true },
      );
      await cache.changed();
    },
    /** False when nothing was stored under the name. */
    async remove(name: string): Promise<boolean> {
      const { deletedCount } = await EnvVar.deleteOne({ _id: settingId(name) });
      await cache.changed();
      return deletedCount > 0;
    },
  };
}

export type Credentials = ReturnType<typeof createCredentials>;
