import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeUser } from '../support/access';
import { client } from '../support/http';
import {
  addNode,
  assertNoProblems,
  createSpur,
  openDashboard,
  signInWithPassword,
  startUiStack,
  type UiStack,
} from '../support/ui';

const ADMIN_KEY = 'spur_ui-roles-admin-key-0123456789';
const BUILDER = { username: 'bea-builder', password: 'a builder password' };
const VIEWER = { username: 'vic-viewer', password: 'a viewer password' };

interface Definition {
  nodes: { id: string }[];
  links: unknown[];
}

/**
 * PySpur's UI as users of two roles see it, signed in with a username and password: a builder's
 * edits are saved, a viewer reads everything and changes nothing. PySpur's UI knows nothing of
 * roles; a refused change reaches it as a 403.
 */
describe('browser: the web UI with roles', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let workflowId: string;
  let builderNode: string;
  const definitionOf = async (id: string) => (await admin.get(`/wf/${id}/`)).body.definition as Definition;

  before(async () => {
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    admin = client(stack.engine.api.baseUrl, bearer(ADMIN_KEY));
    await makeUser(admin, { ...BUILDER, role: 'builder' });
    await makeUser(admin, { ...VIEWER, role: 'viewer' });
  });
  after(async () => stack?.close());

  it('a builder signed in with a password creates a spur in the editor, and the api has it', async () => {
    const { page } = stack;
    await signInWithPassword(stack, BUILDER.username, BUILDER.password);
    await page.getByRole('button', { name: 'Get Started' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    workflowId = await createSpur(page);
    builderNode = await addNode(page, 'Python', 'Python Function', 'PythonFuncNode');
    // The editor saves on its own (PUT /wf/{id}/): the api reports the node once it has.
    const deadline = Date.now() + 60_000;
    while (!(await definitionOf(workflowId)).nodes.some((n) => n.id === builderNode)) {
      assert.ok(Date.now() < deadline, 'the editor never saved the node');
      await new Promise((r) => setTimeout(r, 250));
    }
    assertNoProblems(stack.browser);
  });

  it('a viewer sees the dashboard and the workflow; a save the editor may attempt on its own is refused and changes nothing', async () => {
    const { page, origin } = stack;
    // The builder's page first stops asking (its dashboard reads settings one by one), then signs out.
    await page.goto('about:blank');
    await stack.browser.context.clearCookies();
    await signInWithPassword(stack, VIEWER.username, VIEWER.password);
    await openDashboard(stack, false);
    const { name } = (await admin.get(`/wf/${workflowId}/`)).body as { name: string };
    await page
      .getByRole('row', { name: new RegExp(workflowId) })
      .getByText(name)
      .waitFor();
    const stored = await definitionOf(workflowId);
    await page.goto(`${origin}/workflows/${workflowId}`);
    await page.locator(`.react-flow__node[data-id="${builderNode}"]`).waitFor();
    // PySpur's editor sometimes saves a workflow it has just drawn (its layout settling), which a
    // viewer may not: let it, then leave, so no late answer lands in the next test.
    await page.waitForLoadState('networkidle');
    await page.goto('about:blank');
    const calls = stack.browser.problems.filter((p) => !p.startsWith('page error:'));
    assert.ok(
      calls.every((c) => c === `PUT /api/wf/${workflowId}/ → 403`),
      stack.browser.problems.join('\n'),
    );
    assert.deepEqual(await definitionOf(workflowId), stored, 'the api still has the builder’s workflow');
    stack.browser.problems.length = 0;
  });

  it("a viewer's new spur is refused (403) and the dashboard says it failed; no workflow is made", async () => {
    const { page } = stack;
    const before = (await admin.get('/wf/?page_size=100')).body as unknown[];
    await openDashboard(stack, false);
    await page.getByRole('button', { name: 'New Spur' }).click();
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/wf/'),
      page.getByRole('dialog').getByRole('button', { name: 'Create' }).click(),
    ]);
    assert.equal(refused.status(), 403);
    assert.match(((await refused.json()) as { detail: string }).detail, /'build'/);
    await page.getByText('Failed to create new spur').waitFor();
    assert.equal(new URL(page.url()).pathname, '/dashboard', 'no editor opens');
    assert.deepEqual((await admin.get('/wf/?page_size=100')).body, before, 'no workflow was made');
    assertOnlyRefusals(['POST /api/wf/ → 403']);
  });

  it("a viewer's edit in the editor is refused (403) and the workflow in the api is unchanged; the editor reports the failure only in the console, and a reload shows the stored workflow", async () => {
    const { page, origin } = stack;
    const stored = await definitionOf(workflowId);
    await page.goto(`${origin}/workflows/${workflowId}`);
    await page.locator(`.react-flow__node[data-id="${builderNode}"]`).waitFor();
    const reported = page.waitForEvent(
      'console',
      (m) => m.type() === 'error' && /Error updating workflow/.test(m.text()),
    );
    const save = page.waitForResponse(
      (r) => r.request().method() === 'PUT' && new URL(r.url()).pathname === `/api/wf/${workflowId}/`,
    );
    const viewerNode = await addNode(page, 'Python', 'Python Function', 'PythonFuncNode');
    const refused = await save;
    assert.equal(refused.status(), 403);
    assert.match(((await refused.json()) as { detail: string }).detail, /'build'.*your role is viewer/);
    // PySpur's editor saves in the background and shows no message when a save fails: it logs it.
    await reported;
    assert.deepEqual(await definitionOf(workflowId), stored, 'the api still has the builder’s workflow');
    await page.reload();
    await page.locator(`.react-flow__node[data-id="${builderNode}"]`).waitFor();
    assert.equal(await page.locator(`.react-flow__node[data-id="${viewerNode}"]`).count(), 0, 'the edit is gone');
    assertOnlyRefusals([`PUT /api/wf/${workflowId}/ → 403`]);
  });

  /** The problems the browser met are the refusals expected (and the page errors the UI's unhandled ones make); clears them. */
  function assertOnlyRefusals(expected: string[]): void {
    const { problems } = stack.browser;
    const calls = problems.filter((p) => !p.startsWith('page error:'));
    assert.deepEqual([...new Set(calls)], expected, problems.join('\n'));
    problems.length = 0;
  }
});
