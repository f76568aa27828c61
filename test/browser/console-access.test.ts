// The console's Access screen (/console/access) in headless Chromium, signed in with a password:
// an admin's users, keys, workspaces and audit trail, each change checked through the API; and
// what a viewer and an operator are shown (the API's refusal, no action to take).
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, makeUser, type MadeKey, type MadeUser } from '../support/access';
import type { AuditEntryView } from '../support/audit';
import { seriousAccessibilityProblems, signIn } from '../support/console';
import { client } from '../support/http';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';

const ADMIN_KEY = 'spur_console-access-admin-key-0123456789';
const ADMIN = { username: 'ada-admin', password: 'an admin password' };
const OPERATOR = { username: 'otto-operator', password: 'an operator password' };
const VIEWER = { username: 'vic-viewer', password: 'a viewer password' };

interface KeyView {
  id: string;
  name: string;
  user_id: string;
}

describe('browser: the console’s Access screen', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let adminUser: MadeUser;
  let listed: MadeUser;
  let listedKey: MadeKey;
  let research: { id: string; name: string };
  /** The key the admin makes in the console: its id, and the key as the page showed it once. */
  let made: { id: string; key: string };

  const section = (title: string) => stack.page.locator(`section[aria-labelledby="${title}"]`);
  const keysListed = async () => (await admin.get<KeyView[]>('/access/keys/')).body;
  /** The browser's failed `/api` calls so far, which the test then expects none of. */
  const takeProblems = () => stack.browser.problems.splice(0);

  before(async () => {
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    admin = client(stack.engine.api.baseUrl, bearer(ADMIN_KEY));
    adminUser = await makeUser(admin, { ...ADMIN, role: 'admin' });
    await makeUser(admin, { ...OPERATOR, role: 'operator' });
    await makeUser(admin, { ...VIEWER, role: 'viewer' });
    listed = await makeUser(admin, { username: 'uma-listed', role: 'approver' });
    listedKey = await makeKey(admin, { name: 'uma’s deploy key', user_id: listed.id });
    const res = await admin.post('/access/workspaces/', { name: 'Research' });
    assert.equal(res.status, 201, res.text);
    research = res.body;
  });
  after(async () => stack?.close());

  it('an admin opens Access from the navigation: users, keys, workspaces and the audit trail the API holds', async () => {
    const { page } = stack;
    await signIn(stack, ADMIN, '/console/runs');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Access' }).click();
    await page.waitForURL(/\/console\/access$/);

    const user = section('users-title').locator(`tr[data-user="${listed.id}"]`);
    await user.waitFor();
    assert.match(await user.innerText(), /uma-listed\tUA\d+\t/);
    assert.equal(await user.getByLabel('Role of uma-listed').inputValue(), 'approver');
    const key = section('keys-title').locator(`tr[data-key="${listedKey.id}"]`);
    await key.waitFor();
    assert.match(await key.innerText(), /uma’s deploy key\tuma-listed\tapprover\tdefault/);
    await section('workspaces-title')
      .locator(`tr[data-workspace="${research.id}"]`)
      .getByRole('cell', { name: 'Research', exact: true })
      .waitFor();
    // The audit trail, newest first: the workspace the test made is on its first page.
    const [workspaceMade] = (await admin.get<AuditEntryView[]>(`/access/audit/?action=workspace.create`)).body;
    assert.ok(workspaceMade, 'the API recorded the workspace made');
    const entry = section('audit-title').locator(`tr[data-entry="${workspaceMade.id}"]`);
    await entry.waitFor();
    assert.match(await entry.innerText(), /workspace\.create\tworkspace/);

    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
    assertNoProblems(stack.browser);
  });

  it('makes a key: shown once, listed by the API, working as a Bearer token; gone from the page after a reload', async () => {
    const { page, engine } = stack;
    const form = page.getByRole('form', { name: 'New key' });
    await form.getByLabel('Key name').fill('made in the console');
    await form.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('[role="status"]').filter({ hasText: 'it will not be shown again' });
    await shown.waitFor();
    const key = await shown.locator('code').innerText();
    assert.match(key, /^spur_/);

    const mine = (await keysListed()).find((k) => k.name === 'made in the console');
    assert.ok(mine, 'the API lists the key');
    assert.equal(mine.user_id, adminUser.id, 'a key made without naming a user is the signed-in admin’s');
    made = { id: mine.id, key };
    await section('keys-title').locator(`tr[data-key="${made.id}"]`).waitFor();
    const me = await client(engine.api.baseUrl, bearer(key)).get('/access/me/');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual([me.body.username, me.body.key_id], [ADMIN.username, made.id]);

    // Nothing keeps the key but the page's memory: not the storage, not the address, not a reload.
    // (An expression, evaluated in the page: the tests' program has no DOM types.)
    const stored = await page.evaluate<string>('JSON.stringify([{ ...localStorage }, { ...sessionStorage }])');
    assert.ok(!stored.includes(key), 'the key is in no browser storage');
    assert.ok(!page.url().includes(key));
    await page.reload();
    await section('keys-title').locator(`tr[data-key="${made.id}"]`).waitFor();
    assert.ok(!(await page.content()).includes(key), 'the key is not on the page after a reload');
    assert.equal(await page.locator('code.new-key').count(), 0);
    assertNoProblems(stack.browser);
  });

  it('revokes that key after a confirm: the API lists it no more, and the key is refused (401)', async () => {
    const { page, engine } = stack;
    const row = section('keys-title').locator(`tr[data-key="${made.id}"]`);
    await row.getByRole('button', { name: `Revoke ${made.id}`, exact: true }).click();
    assert.ok(
      (await keysListed()).some((k) => k.id === made.id),
      'asking is not revoking',
    );
    await row.getByRole('button', { name: `Yes, revoke ${made.id}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Key ${made.id} (made in the console) revoked` })
      .waitFor();
    await row.waitFor({ state: 'detached' });
    assert.ok(!(await keysListed()).some((k) => k.id === made.id), 'the API no longer lists the key');
    const refused = await client(engine.api.baseUrl, bearer(made.key)).get('/access/me/');
    assert.equal(refused.status, 401, refused.text);
    assertNoProblems(stack.browser);
  });

  it('creates a user with a role, changes the role, and deletes another user: the API reports each', async () => {
    const { page } = stack;
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Username').fill('nico-new');
    await form.getByLabel('Password', { exact: true }).fill('a new user password');
    await form.getByLabel('Role').selectOption('operator');
    await form.getByRole('button', { name: 'Create user' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /User nico-new \(UA\d+\) created as operator/ })
      .waitFor();
    const users = (await admin.get<MadeUser[]>('/access/users/?page_size=100')).body;
    const nico = users.find((u) => u.username === 'nico-new');
    assert.equal(nico?.role, 'operator', JSON.stringify(users));

    const row = section('users-title').locator(`tr[data-user="${nico.id}"]`);
    await row.getByLabel('Role of nico-new').selectOption('builder');
    await row.getByRole('button', { name: 'Set role of nico-new' }).click();
    await page.getByRole('status').filter({ hasText: 'nico-new is now builder' }).waitFor();
    assert.equal((await admin.get(`/access/users/${nico.id}/`)).body.role, 'builder');

    const doomed = await makeUser(admin, { username: 'dora-doomed', role: 'viewer' });
    await page.reload(); // the page reads the users once: this one came after
    const doomedRow = section('users-title').locator(`tr[data-user="${doomed.id}"]`);
    await doomedRow.getByRole('button', { name: 'Delete dora-doomed' }).click();
    await doomedRow.getByRole('button', { name: 'Yes, delete dora-doomed' }).click();
    await doomedRow.waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/access/users/${doomed.id}/`)).status, 404);
    assertNoProblems(stack.browser);
  });

  it('adds a member to a workspace with a role, and takes them out: the API reports the membership', async () => {
    const { page } = stack;
    const nico = (await admin.get<MadeUser[]>('/access/users/?page_size=100')).body.find(
      (u) => u.username === 'nico-new',
    ) as MadeUser;
    await section('workspaces-title').getByRole('button', { name: 'Members of Research' }).click();
    const members = page.locator('section[aria-labelledby="members-title"]');
    await members.getByRole('heading', { name: `Members of Research (${research.id})` }).waitFor();
    const form = members.getByRole('form', { name: 'Add a member to Research' });
    await form.getByLabel('User').selectOption(nico.id);
    await form.getByLabel('Role in Research').selectOption('operator');
    await form.getByRole('button', { name: 'Add member' }).click();
    await members.locator(`tr[data-member="${nico.id}"]`).waitFor();
    const listedMembers = (await admin.get(`/access/workspaces/${research.id}/members/`)).body;
    assert.deepEqual(listedMembers, [{ user_id: nico.id, username: 'nico-new', role: 'operator' }]);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await members.getByRole('button', { name: 'Remove nico-new' }).click();
    await members.getByRole('button', { name: 'Yes, remove nico-new' }).click();
    await members.locator(`tr[data-member="${nico.id}"]`).waitFor({ state: 'detached' });
    assert.deepEqual((await admin.get(`/access/workspaces/${research.id}/members/`)).body, []);
    assertNoProblems(stack.browser);
  });

  it('the audit trail shows the key’s creation (filtered by action) and the chain’s verification', async () => {
    const { page } = stack;
    const audit = section('audit-title');
    const [creation] = (await admin.get<AuditEntryView[]>(`/access/audit/?action=key.create&target_id=${made.id}`))
      .body;
    assert.ok(creation, 'the API recorded the key’s creation');
    await audit.getByLabel('Action').fill('key.create');
    await audit.getByRole('button', { name: 'Filter the trail' }).click();
    const row = audit.locator(`tr[data-entry="${creation.id}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), new RegExp(`ada-admin.*\\tkey\\.create\\tkey ${made.id}\\t201\\t`));
    assert.deepEqual(
      await audit.locator('tbody td:nth-child(4)').allInnerTexts(),
      (await admin.get<AuditEntryView[]>('/access/audit/?action=key.create&page_size=20')).body.map((e) => e.action),
      'the filter is the API’s: only key creations, as many as it lists',
    );

    await audit.getByRole('button', { name: 'Verify the chain' }).click();
    await audit
      .getByRole('status')
      .filter({ hasText: /The chain is intact: \d+ entries/ })
      .waitFor();
    assert.equal((await admin.get('/access/audit/verify/')).body.ok, true);
    assert.ok(page.url().endsWith('/console/access'));
    assertNoProblems(stack.browser);
  });

  for (const [who, user] of [
    ['a viewer', VIEWER],
    ['an operator', OPERATOR],
  ] as const)
    it(`${who} has no Access link; at /console/access they read the API's 403 and are offered no action`, async () => {
      const { page, origin, engine } = stack;
      const account = (await admin.get<MadeUser[]>('/access/users/?page_size=100')).body.find(
        (u) => u.username === user.username,
      ) as MadeUser;
      // Their own key, to hear the API's refusals as they would, and to see that the screen lists it without a revoke.
      const own = await makeKey(admin, { name: `${user.username}'s key`, user_id: account.id });
      const asThem = client(engine.api.baseUrl, bearer(own.key));
      const refusal = async (path: string) => {
        const res = await asThem.get(path);
        assert.equal(res.status, 403, res.text);
        return res.body.detail as string;
      };

      await signIn(stack, user, '/console/runs');
      await page.locator('header .who').waitFor(); // the navigation knows who is signed in
      assert.equal(await page.getByRole('link', { name: 'Access' }).count(), 0);

      await page.goto(`${origin}/console/access`);
      await section('users-title')
        .getByRole('alert')
        .getByText(await refusal('/access/users/'))
        .waitFor();
      await section('audit-title')
        .getByRole('alert')
        .getByText(await refusal('/access/audit/'))
        .waitFor();
      await section('keys-title').locator(`tr[data-key="${own.id}"]`).waitFor();
      await section('workspaces-title').locator('tr[data-workspace="default"]').waitFor();
      assert.equal(await page.getByRole('form').count(), 0, 'no form to create anything');
      assert.equal(
        await page.getByRole('button', { name: /Create|Revoke|Delete|Set role|Add member|Remove/ }).count(),
        0,
      );
      assert.deepEqual(await seriousAccessibilityProblems(stack), []);
      // The page asked for what it shows; the API refused what the role may not read, and nothing else.
      assert.deepEqual(takeProblems().sort(), ['GET /api/access/audit/ → 403', 'GET /api/access/users/ → 403']);
    });
});
