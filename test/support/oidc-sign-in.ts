import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from './api';
import { openBrowser, type TestBrowser } from './browser';
import { tinyWebUiExport } from './browser-login';
import { oidcEnv, reserveIssuer, startOidcProvider, type TestOidcProvider } from './oidc-provider';

/** An api that signs in with a real OpenID provider, the provider, and a browser to walk the flow in. */
export interface OidcSignInStack {
  api: TestApi;
  idp: TestOidcProvider;
  browser: TestBrowser;
  /** The api's site, where the login page and the callback are. */
  origin: string;
  close(): Promise<void>;
}

/**
 * The provider's issuer is reserved first: the api reads it at start, and the provider is told the
 * api's callback once the api listens. Sign-in needs a key configured (`adminKey`, an admin's), and
 * failed sign-ins are not throttled, since a test makes many.
 */
export async function startOidcSignIn(adminKey: string): Promise<OidcSignInStack> {
  const reserved = await reserveIssuer();
  const api = await startApi({
    SPUR_API_KEY_HASHES: hashApiKey(adminKey),
    SPUR_WEB_UI_DIR: tinyWebUiExport(),
    SPUR_LOGIN_MAX_FAILURES: '1000',
    ...oidcEnv(reserved.issuer),
  });
  const origin = api.baseUrl.replace(/\/api$/, '');
  const idp = await startOidcProvider(reserved, `${origin}/login/oidc/callback`);
  const browser = await openBrowser();
  return {
    api,
    idp,
    browser,
    origin,
    async close() {
      await browser.close();
      await idp.close();
      await api.close();
    },
  };
}
