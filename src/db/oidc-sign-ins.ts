import { trusted } from 'mongoose';
import type { Models, OidcSignInDoc } from './models';

/** What a sign-in's callback must find again (models/oidc-sign-in.model.ts). */
export interface PendingOidcSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  next: string;
  expiresAt: Date;
}

export interface OidcSignInStore {
  /** Records a sign-in just started under `id` (a keyed digest of the cookie's random value). */
  create(id: string, pending: PendingOidcSignIn, now: Date): Promise<void>;
  /** Removes the sign-in and answers it, unless there is none or it has expired: once, whoever asks. */
  take(id: string, now: Date): Promise<PendingOidcSignIn | null>;
}

/** How often a process removes sign-ins nobody came back for (where no TTL index does: FerretDB v1). */
const SWEEP_EVERY_MS = 10 * 60_000;

/** The only writer of `oidc_sign_ins`. */
export function createOidcSignInStore(models: Models): OidcSignInStore {
  const { OidcSignIn } = models;
  let lastSweep = 0;

  return {
    async create(id, pending, now) {
      if (now.getTime() - lastSweep >= SWEEP_EVERY_MS) {
        lastSweep = now.getTime();
        OidcSignIn.deleteMany({ expires_at: trusted({ $lt: now }) }).catch(() => undefined);
      }
      await OidcSignIn.create({
        _id: id,
        state: pending.state,
        nonce: pending.nonce,
        code_verifier: pending.codeVerifier,
        redirect_uri: pending.redirectUri,
        next: pending.next,
        created_at: now,
        expires_at: pending.expiresAt,
      });
    },
    async take(id, now) {
      const doc = await OidcSignIn.findOneAndDelete({ _id: id }).lean<OidcSignInDoc>();
      if (!doc || doc.expires_at <= now) return null;
      return {
        state: doc.state,
        nonce: doc.nonce,
        codeVerifier: doc.code_verifier,
        redirectUri: doc.redirect_uri,
        next: doc.next,
        expiresAt: doc.expires_at,
      };
    },
  };
}
