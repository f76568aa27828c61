import * as oidc from 'openid-client';
import type { OidcSettings } from '../config/settings';
import { hostPort } from '../outbound/checked-target';
import { OutboundRefusedError } from '../outbound/errors';
import { type OutboundFetch, type OutboundPolicy, createOutboundFetch } from '../outbound/outbound-fetch';

/** The per-sign-in secrets: sent (state, nonce, the verifier's S256 challenge) and checked on return. */
export interface SignInChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The claims of a validated ID token. */
export type IdTokenClaims = oidc.IDToken;

export interface OidcClient {
  /** A fresh state, nonce and PKCE verifier for one sign-in. */
  newChecks(): SignInChecks;
  /** The provider's authorization URL for this sign-in (authorization code flow, PKCE S256). */
  authorizationUrl(redirectUri: string, checks: SignInChecks): Promise<URL>;
  /**
   * Checks the callback (its `state`, its `iss` when the provider sends one), trades its code with
   * the verifier, and validates the ID token: signature against the provider's published keys,
   * issuer, audience, expiry, nonce. Throws when any of it fails.
   */
  claimsOf(callbackUrl: URL, checks: SignInChecks): Promise<IdTokenClaims>;
}

/**
 * Spur as an OpenID Connect relying party, with openid-client (a certified implementation). Every
 * request to the provider (discovery, token, keys) goes through the one outbound client: the
 * issuer's `host:port` is trusted as SPUR_OUTBOUND_ALLOW_HOSTS entries are (the operator named it),
 * other hosts the provider's metadata names follow the address policy. Discovery happens at the
 * first sign-in and is kept; a failed one is tried again at the next.
 */
export function createOidcClient(settings: OidcSettings, outbound: OutboundPolicy): OidcClient {
  const issuer = new URL(settings.issuer);
  const fetch = createOutboundFetch({ ...outbound, allowHosts: [...outbound.allowHosts, hostPort(issuer)] }).as(
    'sign_in',
  );
  let discovered: Promise<oidc.Configuration> | undefined;

  function configuration(): Promise<oidc.Configuration> {
    discovered ??= oidc
      .discovery(issuer, settings.clientId, undefined, clientSecretAuth(settings.clientSecret), {
        [oidc.customFetch]: viaOutbound(fetch),
        execute: [
          // The ID token's signature is checked against the provider's keys, not taken on the word of the channel.
          oidc.enableNonRepudiationChecks,
          // An http issuer passes the settings' check only on a loopback host.
          ...(issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : []),
        ],
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  }

  return {
    newChecks: () => ({
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    }),
    async authorizationUrl(redirectUri, checks) {
      return oidc.buildAuthorizationUrl(await configuration(), {
        redirect_uri: redirectUri,
        scope: settings.scopes,
        response_type: 'code',
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
    },
    async claimsOf(callbackUrl, checks) {
      const tokens = await oidc.authorizationCodeGrant(await configuration(), callbackUrl, {
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        pkceCodeVerifier: checks.codeVerifier,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new Error('the token response has no ID token');
      return claims;
    },
  };
}

/** Why a sign-in failed, as the person is told: the provider unreachable, refusing, or its answer not checking out. */
export type SignInFailure = { kind: 'unreachable' } | { kind: 'refused'; error: string } | { kind: 'invalid' };

export function signInFailureOf(err: unknown): SignInFailure {
  if (err instanceof oidc.AuthorizationResponseError) return { kind: 'refused', error: err.error };
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    // The address policy, a system error of the connection (ECONNREFUSED, ENOTFOUND…), a timeout.
    if (e instanceof OutboundRefusedError || (typeof code === 'string' && /^E[A-Z]+$/.test(code))) {
      return { kind: 'unreachable' };
    }
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { kind: 'unreachable' };
  }
  return { kind: 'invalid' };
}

/** openid-client's requests, sent by the outbound client (its address policy, redirect checks and size cap). */
function viaOutbound(fetch: OutboundFetch): oidc.CustomFetch {
  return (url, options) =>
    fetch(url, {
      method: options.method,
      headers: options.headers,
      body: options.body as RequestInit['body'],
      redirect: options.redirect,
      ...(options.signal ? { signal: options.signal } : {}),
    });
}

/**
 * The client secret sent as the provider's metadata says it takes it: in the Authorization header
 * (client_secret_basic, the default when the metadata is silent) or in the body (client_secret_post).
 */
function clientSecretAuth(secret: string): oidc.ClientAuth {
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (as, client, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost =
      methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    (usePost ? post : basic)(as, client, body, headers);
  };
}
