import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A sign-in with the OpenID provider between its start (`/login/oidc`) and its callback: what the
 * callback must find again, bound to the browser that started it. `_id` is a keyed digest of the
 * random id in that browser's cookie, so the collection alone names no cookie. The callback takes
 * (reads and deletes) the document in one step: each sign-in is answered once, on any replica.
 */
export const oidcSignInSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Sent as `state`; the callback's must be this one. */
    state: { type: String, required: true },
    /** Sent as `nonce`; the ID token's must be this one. */
    nonce: { type: String, required: true },
    /** PKCE: its S256 challenge went to the provider, the verifier goes with the code. */
    code_verifier: { type: String, required: true },
    /** The redirect URI sent at the start (the token request must name the same). */
    redirect_uri: { type: String, required: true },
    /** Where the browser goes once signed in: a path of this server. */
    next: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
  },
  { collection: 'oidc_sign_ins', versionKey: false },
);

export type OidcSignInDoc = InferSchemaType<typeof oidcSignInSchema> & { _id: string };
