import assert from 'node:assert/strict';
import http from 'node:http';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { rawClient, type RawClient, type RawRequest } from '../support/raw-http';
import {
  MARK,
  type Probe,
  assertNoSecret,
  type Seeded,
  databaseDigest,
  probeRequest,
  probes,
  secretsOf,
  seed,
  tokenRouteEffects,
  variantsOf,
  wirePath,
} from './attack-corpus';

const KEY = 'spur_gate-test-key-0123456789';
const WITH_KEY = { authorization: `Bearer ${KEY}` };
/** No worker takes the seeded run's pause actions: the controls' decisions go as signals after 1 s, not 5. */
const FAST_PAUSE_ACTIONS = { SPUR_PAUSE_ACTION_WAIT_SECONDS: '1' };

interface Answer {
  status: number;
  text: string;
}

/**
 * Sends a probe at `path` and returns its status and body. An event stream is never read to its
 * end (a PENDING run's stream stays open): its status line is the answer.
 */
async function send(
  raw: RawClient,
  origin: string,
  probe: Probe,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const req = await probeRequest(probe, path, headers);
  if (!probe.stream) {
    const reply = await raw.request(req);
    return { status: reply.status, text: reply.body.toString('latin1') };
  }
  return statusLine(origin, req);
}

function statusLine(origin: string, req: RawRequest): Promise<Answer> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const out = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers: req.headers ?? {} },
      (res) => {
        // A refusal is a short JSON body; a served stream only ever sends its first events.
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('latin1') }));
        if (res.statusCode === 200) {
          resolve({ status: 200, text: '' });
          out.destroy();
        }
      },
    );
    out.on('error', reject);
    out.end();
  });
}

/** Every probe at every spelling but its own; `check` judges each answer. */
async function sendVariants(
  raw: RawClient,
  origin: string,
  corpus: Probe[],
  headers: Record<string, string>,
  check: Check,
): Promise<number> {
  let sent = 0;
  for (const probe of corpus) {
    for (const path of variantsOf(probe)) {
      const answer = await send(raw, origin, probe, path, headers);
      check(probe, `${probe.family}: ${probe.method} ${path}`, answer);
      sent++;
    }
  }
  return sent;
}

/** The probes with every DELETE last, the workflow's own last of all: the others still find their targets. */
function deletesLast(corpus: Probe[]): Probe[] {
  const rank = (p: Probe) => (p.method !== 'DELETE' ? 0 : /^\/wf\/[^/]+\/$/.test(p.path) ? 2 : 1);
  return [...corpus].sort((a, b) => rank(a) - rank(b));
}

type Check = (probe: Probe, what: string, answer: Answer) => void;

/** `allowed`, or the token route's own answer to a token it never issued; no stored data, no secret. */
function assertRefused(allowed: number[], secrets: string[]): Check {
  return (probe, what, answer) => {
    const statuses = probe.tokenRoute ? [...allowed, probe.tokenRoute.wrongToken] : allowed;
    assert.ok(statuses.includes(answer.status), `${what} → ${answer.status} ${answer.text.slice(0, 200)}`);
    assert.ok(!answer.text.includes(MARK), `${what} answered stored data: ${answer.text.slice(0, 200)}`);
    assertNoSecret(what, answer.text, secrets);
  };
}

/** The control's judgement: a live route; a token route took its token (the variants' refusals are not a broken seed). */
function assertServed(probe: Probe, answer: Answer, secrets: string[]): void {
  const what = `${probe.family}: ${probe.method} ${probe.path} → ${answer.status} ${answer.text.slice(0, 300)}`;
  assert.ok(![401, 404, 405, 415].includes(answer.status), what);
  if (probe.tokenRoute) assert.ok(answer.status < 300, what);
  assertNoSecret(what, answer.text, secrets);
}

/** No run was started (by a webhook, a schedule or anything) and the seeded pause was not decided. */
async function assertNothingStartedOrDecided(api: TestApi, seeded: Seeded, before: unknown): Promise<void> {
  const after = await tokenRouteEffects(api, seeded);
  assert.deepEqual(after, before, 'no run started, no decision reached the paused run');
  assert.equal(after.pauseOpen, true, 'the pause is still open');
}

describe('security: one gate in front of every route, whatever the spelling of the path', function () {
  this.timeout(240_000);

  describe('with API keys configured', () => {
    let api: TestApi;
    let raw: RawClient;
    let origin: string;
    let seeded: Seeded;
    before(async () => {
      api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEB_UI: 'false', ...FAST_PAUSE_ACTIONS });
      origin = api.baseUrl.replace(/\/api$/, '');
      raw = rawClient(origin);
      seeded = await seed(api, WITH_KEY);
    });
    after(async () => {
      raw?.close();
      await api?.close();
    });

    it('refuses every other spelling of every route family without a key (400, 401 or 404; a token route: its answer to a foreign token): no stored data in any answer, no document changed, no run started or pause decided', async () => {
      const before = await databaseDigest(api);
      const effects = await tokenRouteEffects(api, seeded);
      const sent = await sendVariants(raw, origin, probes(seeded), {}, assertRefused([400, 401, 404], secretsOf(api)));
      assert.ok(sent > 1000, `${sent} requests`);
      assert.equal(await databaseDigest(api), before, 'the database is as it was');
      await assertNothingStartedOrDecided(api, seeded, effects);
    });

    it('serves no other spelling with a key either (the routers match exactly, as the gate does): 400, 404 or 415 (a token route: its answer to a foreign token), no document changed, no run started or pause decided', async () => {
      const before = await databaseDigest(api);
      const effects = await tokenRouteEffects(api, seeded);
      await sendVariants(raw, origin, probes(seeded), WITH_KEY, assertRefused([400, 404, 415], secretsOf(api)));
      assert.equal(await databaseDigest(api), before, 'the database is as it was');
      await assertNothingStartedOrDecided(api, seeded, effects);
    });

    it('refuses the canonical spelling of every route but the token routes without a key or with a wrong one (401), no document changed', async () => {
      const before = await databaseDigest(api);
      for (const probe of probes(seeded).filter((p) => !p.tokenRoute)) {
        for (const headers of [{}, { authorization: 'Bearer wrong' }, { 'x-api-key': `${KEY}x` }] as Record<
          string,
          string
        >[]) {
          assertRefused([401], secretsOf(api))(
            probe,
            `${probe.family}: ${probe.method} ${wirePath(probe)}`,
            await send(raw, origin, probe, wirePath(probe), headers),
          );
        }
      }
      assert.equal(await databaseDigest(api), before, 'the database is as it was');
    });

    it('serves the canonical spelling of every probe with a key (the control: each probe names a live route that reads or changes data)', async () => {
      const before = await databaseDigest(api);
      for (const probe of deletesLast(probes(seeded))) {
        const answer = await send(raw, origin, probe, wirePath(probe), WITH_KEY);
        assertServed(probe, answer, secretsOf(api));
      }
      assert.notEqual(await databaseDigest(api), before, 'the state-changing probes changed the database');
    });
  });

  describe('without API keys (a loopback dev instance)', () => {
    let api: TestApi;
    let raw: RawClient;
    let origin: string;
    let seeded: Seeded;
    before(async () => {
      api = await startApi({ SPUR_WEB_UI: 'false', ...FAST_PAUSE_ACTIONS });
      origin = api.baseUrl.replace(/\/api$/, '');
      raw = rawClient(origin);
      seeded = await seed(api);
    });
    after(async () => {
      raw?.close();
      await api?.close();
    });

    it('serves no other spelling of any route (400, 404, or 415 for a form to no route; a token route: its answer to a foreign token): no stored data in any answer, no document changed, no run started or pause decided', async () => {
      const before = await databaseDigest(api);
      const effects = await tokenRouteEffects(api, seeded);
      await sendVariants(raw, origin, probes(seeded), {}, assertRefused([400, 404, 415], secretsOf(api)));
      assert.equal(await databaseDigest(api), before, 'the database is as it was');
      await assertNothingStartedOrDecided(api, seeded, effects);
    });

    it('serves the canonical spelling of every probe (the control)', async () => {
      const before = await databaseDigest(api);
      for (const probe of deletesLast(probes(seeded))) {
        const answer = await send(raw, origin, probe, wirePath(probe));
        assertServed(probe, answer, secretsOf(api));
      }
      assert.notEqual(await databaseDigest(api), before, 'the state-changing probes changed the database');
    });
  });
});
