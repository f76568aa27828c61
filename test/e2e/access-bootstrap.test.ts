import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { startApi, type TestApi } from '../support/api';
import { entryArgs } from '../support/stack';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run create-user -- …` as the image runs it (compiled), with the api's database settings. */
function createUser(env: Record<string, string>, args: string[], stdin = ''): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('src/processes/create-user.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe('access: the first admin, made from the command line', function () {
  this.timeout(90_000);
  let api: TestApi;
  let origin: string;
  const PASSWORD = 'correct horse battery staple';

  before(async () => {
    api = await startApi({ SPUR_SIGN_IN_REQUIRED: 'true' });
    origin = api.baseUrl.replace(/\/api$/, '');
  });
  after(async () => api?.close());

  const me = (headers: Record<string, string>) => fetch(`${api.baseUrl}/access/me/`, { headers });

  it('an installation that requires sign-in has no admin until the command makes one', async () => {
    assert.equal((await fetch(`${api.baseUrl}/wf/`)).status, 401);
    assert.equal((await me({})).status, 401);
  });

  it('makes an admin with a password and a key: the key acts as them, the password signs them in', async () => {
    const made = await createUser(
      api.env,
      ['alice', '--role', 'admin', '--password-stdin', '--key', 'setup'],
      `${PASSWORD}\n`,
    );
    assert.equal(made.code, 0, made.stderr);
    const key = /^key K\d+: (spur_\S+)$/m.exec(made.stdout)?.[1];
    assert.ok(key, made.stdout);
    const byKey = await me({ authorization: `Bearer ${key}` });
    assert.equal(byKey.status, 200);
    const who = (await byKey.json()) as { user: { username: string }; role: string; via: string };
    assert.deepEqual([who.user.username, who.role, who.via], ['alice', 'admin', 'key']);

    const signIn = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ username: 'alice', password: PASSWORD, next: '/' }).toString(),
    });
    assert.equal(signIn.status, 303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const bySession = (await (await me({ cookie })).json()) as { user: { username: string }; via: string };
    assert.deepEqual([bySession.user.username, bySession.via], ['alice', 'session']);
  });

  it('refuses to make the same user twice, or a role that does not exist, changing nothing', async () => {
    const before = await api.models.AccessUser.find().lean();
    const again = await createUser(api.env, ['alice', '--role', 'viewer']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists/);
    const badRole = await createUser(api.env, ['bob', '--role', 'superuser']);
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /role/);
    assert.deepEqual(await api.models.AccessUser.find().lean(), before);
  });

  it('--update resets the password and role of an existing user', async () => {
    const updated = await createUser(
      api.env,
      ['alice', '--role', 'builder', '--update', '--password-stdin'],
      'a brand new password\n',
    );
    assert.equal(updated.code, 0, updated.stderr);
    const user = await api.models.AccessUser.findOne({ username: 'alice' }).lean();
    assert.equal(user?.role, 'builder');
    assert.match(String(user?.password_hash), /^scrypt\$/);
    const old = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ username: 'alice', password: PASSWORD }).toString(),
    });
    assert.equal(old.status, 401);
  });
});

describe('access: a keyless loopback instance', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => (api = await startApi()));
  after(async () => api?.close());

  it('acts as the admin named local', async () => {
    const res = await fetch(`${api.baseUrl}/access/me/`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { user: unknown; username: string; role: string; via: string };
    assert.deepEqual([body.user, body.username, body.role, body.via], [null, 'local', 'admin', 'local']);
  });
});
