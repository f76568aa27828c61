import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, type JWK, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';
import { freePort } from '../../scripts/lib/ports';

/** An ID token as the provider issued it, for a rewrite to change. */
export interface IssuedIdToken {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/** Makes the ID token the client receives instead (re-signed by the test, or not at all). */
export type IdTokenRewrite = (issued: IssuedIdToken, keys: SigningKeys) => Promise<string>;

export interface SigningKeys {
  /** The provider's own key (in its JWKS): a token signed with it has a valid signature. */
  provider: { privateKey: CryptoKey; kid: string };
  /** A key of the test's that the provider never published. */
  stranger: { privateKey: CryptoKey };
}

/**
 * A certified OpenID provider (panva's oidc-provider) on loopback, with one static client that must
 * use PKCE, accounts whose claims a test sets (the dev login takes any password: the login is the
 * account), and a real HTTP proxy in front of it whose address is the issuer. The proxy passes
 * everything through, and while `rewrite` is set it rewrites the ID token in the token endpoint's
 * answers: how a test puts a forged, expired or wrong-nonce token into an otherwise real flow.
 */
export interface TestOidcProvider {
  /** `http://localhost:<port>`: another site than the api's `http://127.0.0.1:<port>`, as in production. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims besides `sub` per account (login); a test may change them between sign-ins. */
  accounts: Map<string, Record<string, unknown>>;
  rewrite: IdTokenRewrite | null;
  /**
   * While set, the provider's redirect back to the client is held by the proxy (answered 200 with
   * a page saying so) and handed here: the callback URL a browser would have gone to. (A browser's
   * own request routing never sees it: it is a redirect's hop.)
   */
  holdCallback: ((callbackUrl: string) => void) | null;
  /** Token endpoint answers seen by the proxy, with their status. */
  tokenAnswers: number[];
  keys: SigningKeys;
  close(): Promise<void>;
}

export const ROLE_CLAIM = 'spur_role';
/** The static client the provider knows Spur as. */
export const OIDC_CLIENT = { id: 'spur-test', secret: 'a-client-secret-of-the-test-only' };

/** An api's settings for signing in with the test provider at `issuer`. */
export function oidcEnv(issuer: string): Record<string, string> {
  return {
    SPUR_OIDC_ISSUER: issuer,
    SPUR_OIDC_CLIENT_ID: OIDC_CLIENT.id,
    SPUR_OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
    SPUR_OIDC_NAME: 'Test IdP',
    SPUR_OIDC_ROLE_CLAIM: ROLE_CLAIM,
    // The issuer is reachable because it is the configured one, not because private networks are open.
    SPUR_OUTBOUND_ALLOW_PRIVATE: 'false',
  };
}

/** The proxy's port first (the api is configured with the issuer before the provider knows the api's address). */
export async function reserveIssuer(): Promise<{ issuer: string; port: number }> {
  const port = await freePort();
  return { issuer: `http://localhost:${port}`, port };
}

export async function startOidcProvider(
  reserved: { issuer: string; port: number },
  redirectUri: string,
): Promise<TestOidcProvider> {
  const { issuer } = reserved;
  const { id: clientId, secret: clientSecret } = OIDC_CLIENT;
  const accounts = new Map<string, Record<string, unknown>>();
  const signing = await generateKeyPair('RS256', { extractable: true });
  const stranger = await generateKeyPair('RS256');
  const kid = 'provider-key-1';
  const jwk: JWK = { ...(await exportJWK(signing.privateKey)), kid, alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    jwks: { keys: [jwk] },
    cookies: { keys: ['cookie-key-of-the-test-provider'] },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name', ROLE_CLAIM], email: ['email'] },
    // The profile claims go into the ID token itself (Spur reads the role from it, not from userinfo).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    // Lifetimes set, so the provider does not note on every sign-in that it uses its defaults.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, ...(accounts.get(id) ?? {}) }),
    }),
  });
  const backend = http.createServer(provider.callback());
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as AddressInfo).port;

  const state: TestOidcProvider = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    rewrite: null,
    holdCallback: null,
    tokenAnswers: [],
    keys: { provider: { privateKey: signing.privateKey, kid }, stranger: { privateKey: stranger.privateKey } },
    close: async () => {
      proxy.closeAllConnections();
      backend.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => proxy.close(resolve)),
        new Promise((resolve) => backend.close(resolve)),
      ]);
    },
  };

  const proxy = http.createServer((req, res) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const isToken = req.method === 'POST' && req.url?.split('?')[0] === '/token';
        const location = answer.headers.location;
        if (state.holdCallback && location?.startsWith(`${redirectUri}?`)) {
          state.holdCallback(location);
          answer.resume();
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('the way back to the client was held by the test');
          return;
        }
        if (!isToken) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          state.tokenAnswers.push(answer.statusCode ?? 0);
          void rewritten(Buffer.concat(chunks), answer.statusCode ?? 0).then(
            (body) => {
              const headers = { ...answer.headers, 'content-length': String(body.length) };
              res.writeHead(answer.statusCode ?? 502, headers);
              res.end(body);
            },
            (err: Error) => {
              res.writeHead(500);
              res.end(String(err));
            },
          );
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });

  async function rewritten(body: Buffer, status: number): Promise<Buffer> {
    const rewrite = state.rewrite;
    if (!rewrite || status !== 200) return body;
    const answer = JSON.parse(body.toString('utf8')) as { id_token?: string };
    if (!answer.id_token) return body;
    const issued = {
      header: decodeProtectedHeader(answer.id_token) as Record<string, unknown>,
      claims: decodeJwt(answer.id_token) as Record<string, unknown>,
    };
    answer.id_token = await rewrite(issued, state.keys);
    return Buffer.from(JSON.stringify(answer));
  }

  await new Promise<void>((resolve) => proxy.listen(reserved.port, '127.0.0.1', resolve));
  return state;
}

/** Signs `claims` as an ID token with `key` (RS256, under `kid` when given). */
export function signIdToken(claims: Record<string, unknown>, key: CryptoKey, kid?: string): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(kid ? { kid } : {}) }).sign(key);
}

/**
 * At the provider's pages in the browser: its dev login (any password) as `login`, then its
 * consent; the browser is then on its way back to the client.
 */
export async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}
