import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { fulfilIconRequest } from './offline-icons';

/**
 * Headless Chromium (Debian's `chromium` package, driven by playwright-core) for the browser
 * tests: a fresh profile per browser, and nothing leaves the machine — every request to a
 * non-loopback address (PySpur's UI asks for web fonts and analytics) is aborted in the browser,
 * except icon requests, answered locally (offline-icons.ts).
 * A test fails on any failed `/api` call and on any uncaught page error.
 */
export const CHROMIUM = process.env.SPUR_CHROMIUM || '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'data:' || parsed.protocol === 'blob:') return true;
    host = parsed.hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Failed `/api` calls and page errors seen so far. */
  problems: string[];
  /** Requests the browser wanted to send off the machine (aborted). */
  blocked: string[];
  close(): Promise<void>;
}

export async function openBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}. The browser tests need Debian's package: run 'sudo apt-get install chromium' (bash scripts/setup.sh does it when run as root), or set SPUR_CHROMIUM to a Chromium binary.`,
    );
  }
  const profile = mkdtempSync(path.join(os.tmpdir(), 'spur-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: false,
    args: FLAGS,
    viewport: { width: 1440, height: 900 },
  });
  const problems: string[] = [];
  const blocked: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (isLoopbackUrl(url)) return route.continue();
    if (await fulfilIconRequest(route)) return;
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  const watch = (page: Page) => {
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('response', (res) => {
      const { pathname } = new URL(res.url());
      if (pathname.startsWith('/api/') && res.status() >= 400)
        problems.push(`${res.request().method()} ${pathname} → ${res.status()}`);
    });
    page.on('requestfailed', (req) => {
      // ERR_ABORTED: the page itself dropped the request (it navigated on), not a failure of the api.
      if (req.failure()?.errorText === 'net::ERR_ABORTED') return;
      if (isLoopbackUrl(req.url()) && new URL(req.url()).pathname.startsWith('/api/'))
        problems.push(`${req.method()} ${req.url()} failed: ${req.failure()?.errorText}`);
    });
  };
  context.on('page', watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  return {
    context,
    page,
    problems,
    blocked,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
