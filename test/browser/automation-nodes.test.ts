import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitForRun } from '../support/engine';
import { l, n } from '../support/graphs';
import {
  addNode,
  assertNoProblems,
  createSpur,
  openDashboard,
  placed,
  runFromEditor,
  startUiStack,
  type UiStack,
} from '../support/ui';

/** The automation nodes as PySpur's node panel lists them: search text, label, node type. */
const NEW_NODES = [
  ['HTTP', 'HTTP Request', 'HTTPRequestNode'],
  ['Subworkflow', 'Subworkflow', 'SubworkflowNode'],
  ['Wait', 'Wait', 'WaitNode'],
  ['Callback', 'WaitForCallback', 'WaitForCallbackNode'],
] as const;

describe('browser: the automation nodes in the editor (HTTP Request, Subworkflow, Wait, WaitForCallback)', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let service: http.Server;
  let serviceUrl: string;
  const asked: string[] = [];
  before(async () => {
    stack = await startUiStack();
    // A service on loopback the HTTP Request node calls (the engine allows loopback as `npm run dev` does).
    service = http.createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ greeting: `hello ${new URL(req.url ?? '/', 'http://x').searchParams.get('who')}` }));
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  after(async () => {
    await stack?.close();
    await new Promise((resolve) => service?.close(resolve));
  });
  afterEach(() => assertNoProblems(stack.browser));

  it('adds each of them from the node panel, and the editor saves them', async () => {
    const { page, engine } = stack;
    await openDashboard(stack, true);
    const workflowId = await createSpur(page);
    const added: string[] = [];
    for (const [search, label, nodeType] of NEW_NODES) added.push(await addNode(page, search, label, nodeType));

    const deadline = Date.now() + 60_000;
    for (;;) {
      const def = (await engine.http.get(`/wf/${workflowId}/`)).body.definition;
      const types = new Map(def.nodes.map((node: { id: string; node_type: string }) => [node.id, node.node_type]));
      if (added.every((id, i) => types.get(id) === NEW_NODES[i]?.[2])) break;
      assert.ok(Date.now() < deadline, `the editor never saved the new nodes: ${JSON.stringify(def.nodes)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });

  it('runs a workflow that waits, then calls a service, from the editor; the output card shows the answer', async () => {
    const { page, engine } = stack;
    const definition = {
      nodes: placed([
        n('src', 'InputNode', { output_schema: { who: 'string' } }),
        n('pause', 'WaitNode', { seconds: 1 }),
        n('call', 'HTTPRequestNode', {
          method: 'GET',
          url: `${serviceUrl}/greet`,
          query: { who: '{{ pause.src.who }}' },
        }),
        n('out', 'OutputNode', { output_map: { answer: 'call.body' } }),
      ]),
      links: [l('src', 'pause'), l('pause', 'call'), l('call', 'out')],
      test_inputs: [{ id: 1, who: 'from the browser' }],
    };
    const wf = await engine.http.post('/wf/', { name: 'Wait then call', definition });
    assert.equal(wf.status, 200, wf.text);
    await page.goto(`${stack.origin}/workflows/${wf.body.id}`);
    await page.locator('.react-flow__node[data-id="call"]').waitFor();
    await runFromEditor(page, 'from the browser');
    let started: { id: string } | undefined;
    for (const until = Date.now() + 60_000; !started && Date.now() < until;) {
      [started] = (await engine.http.get(`/wf/${wf.body.id}/runs/`)).body;
      if (!started) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(started, 'the editor started a run');
    const run = await waitForRun(engine.http, started.id, undefined, 90_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
    // The editor polls the run and writes each node's output into its card.
    await page
      .locator('.react-flow__node[data-id="out"]')
      .getByText('hello from the browser')
      .waitFor({ timeout: 60_000 });
    assert.equal(asked.length, 1, asked.join(', '));
    assert.equal(new URL(asked[0] as string, serviceUrl).searchParams.get('who'), 'from the browser');
  });
});
