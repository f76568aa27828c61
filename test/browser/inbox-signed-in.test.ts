// PySpur's web UI decides from its inbox with a fixed `user_id: "current-user"`. Signed in as a
// user, the same clicks decide as that user, and only when the node's approvers name them:
// docs/approvals.md, "Who may decide".
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { isFinal, waitForRun } from '../support/engine';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { assertNoProblems, placed, startUiStack, type UiStack } from '../support/ui';

const KEY = 'spur_inbox-signed-in-admin-key';
const PASSWORD = 'a long enough password';

describe('browser: the inbox of a signed-in user', function () {
  this.timeout(240_000);
  let stack: UiStack;
  before(async () => {
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(KEY) });
  });
  after(async () => stack?.close());

  it('approves as the signed-in user: the history names them, by id and username, through the api channel', async () => {
    const { page, origin, engine } = stack;
    const admin = client(engine.api.baseUrl, { authorization: `Bearer ${KEY}` });
    const ada = await admin.post('/access/users/', { username: 'ada', role: 'approver', password: PASSWORD });
    assert.equal(ada.status, 201, ada.text);
    const definition = {
      nodes: placed([
        input(),
        n('gate', 'HumanInterventionNode', { message: 'Ship the release?', approvers: { users: [ada.body.id] } }),
        n('after', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ]),
      links: [l('in', 'gate'), l('gate', 'after')],
    };
    const wf = await admin.post('/wf/', { name: 'release gate', definition });
    assert.equal(wf.status, 200, wf.text);
    const started = await admin.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v2' } } });
    await waitForRun(admin, started.body.id, (r) => r.status === 'PAUSED');

    await page.goto(`${origin}/dashboard`);
    await page.waitForURL(/\/login\?next=%2Fdashboard$/);
    await page.getByLabel('Username', { exact: true }).fill('ada');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${origin}/dashboard`);
    const entry = page
      .locator('div.justify-between', { has: page.locator('h4', { hasText: 'release gate' }) })
      .filter({ hasText: 'Ship the release?' });
    await entry.waitFor();
    await entry.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByText('Workflow approved successfully').waitFor();

    assert.equal((await waitForRun(admin, started.body.id, isFinal)).status, 'COMPLETED');
    const [pause] = (await admin.get(`/wf/pause_history/${started.body.id}/`)).body;
    assert.equal(pause.resume_user_id, ada.body.id, 'not the UI\'s "current-user"');
    assert.deepEqual(
      pause.decisions.map((d: any) => [d.user_id, d.username, d.channel, d.action]),
      [[ada.body.id, 'ada', 'api', 'APPROVE']],
    );
    assertNoProblems(stack.browser);
  });
});
