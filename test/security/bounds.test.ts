import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type Engine, isFinal, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';

/**
 * Bounds on what a definition or a value can make Spur do. A saved definition cannot ask for more
 * agent model calls or nested loop iterations than the installation allows, and a stored one over
 * the limits does not run. A value reference (`__spur_value_ref__`) is read through only when Spur
 * wrote it: one arriving in a run input, a node's output, a model's JSON or a dataset cell never
 * splices another run's stored value into this run.
 */

const KEY = '__spur_value_ref__';
/** Low, so a victim's input of a few KB is stored by reference; forged refs (~250 bytes) stay inline. */
const REF_BYTES = 1024;
const MODEL = { model: 'openai/gpt-4o', max_tokens: 200, temperature: 0.2 };
const SECRET = `victim-secret-${randomBytes(8).toString('hex')}`;

interface RefTarget {
  id: string;
  bytes: number;
  seal?: string;
}

describe('security: limits on definitions and on value references', function () {
  this.timeout(300_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  /** A real stored value of another run (its input, which holds SECRET). */
  let victim: RefTarget;

  before(async () => {
    ({ engine, fake } = await startLlmEngine({ SPUR_VALUE_REF_BYTES: String(REF_BYTES) }));
    const wf = await created({
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
      ],
      links: [l('in', 'out')],
    });
    const started = await engine.http.post(`/wf/${wf}/start_run/`, {
      initial_inputs: { in: { x: `${SECRET}${'.'.repeat(4 * REF_BYTES)}` } },
    });
    assert.equal(started.status, 200, started.text);
    assert.equal((await waitForRun(engine.http, started.body.id)).status, 'COMPLETED');
    // Read from the database, as someone who learnt a stored value's id would know it.
    const doc = await engine.api.models.Run.findById(started.body.id).lean<{ initial_inputs: string }>();
    victim = JSON.parse(doc!.initial_inputs).in.x[KEY] as RefTarget;
    assert.ok(
      victim.id.startsWith(`${started.body.id}/`),
      `the victim's input is stored by reference: ${doc!.initial_inputs}`,
    );
    assert.ok(
      await engine.api.mongo.db!.collection('values.files').findOne({ _id: victim.id as never }),
      'the stored value exists',
    );
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.respondWith(undefined);
  });

  async function created(definition: unknown): Promise<string> {
    const res = await engine.http.post('/wf/', { name: `bounds-${randomBytes(4).toString('hex')}`, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  const workflowCount = () => engine.api.models.Workflow.countDocuments();
  /** Forgeries content can write: the shape refs had before seals, and a seal made up. */
  const forged = () => ({
    bare: { [KEY]: { id: victim.id, bytes: victim.bytes } },
    guessed: { [KEY]: { id: victim.id, bytes: victim.bytes, seal: 'AAAAAAAAAAAAAAAAAAAAAA' } },
  });
  const agentDefinition = (maxIterations: number) => ({
    nodes: [
      n('in', 'InputNode', { output_schema: { task: 'string' } }),
      n('agent', 'AgentNode', { llm_info: MODEL, user_message: '{{in.task}}', max_iterations: maxIterations }),
      n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
    ],
    links: [l('in', 'agent'), l('agent', 'out')],
  });
  /** Loops nested three deep: outer × mid × inner iterations in all. */
  const nestedLoops = (outer: number, mid: number, inner: number) => ({
    nodes: [
      n('in', 'InputNode', { output_schema: { x: 'string' } }),
      n('outer', 'ForLoopNode', { num_iterations: outer }),
      n('oi', 'InputNode', {}, { parent_id: 'outer' }),
      n('mid', 'ForLoopNode', { num_iterations: mid }, { parent_id: 'outer' }),
      n('mi', 'InputNode', {}, { parent_id: 'mid' }),
      n('inner', 'ForLoopNode', { num_iterations: inner }, { parent_id: 'mid' }),
      n('ii', 'InputNode', {}, { parent_id: 'inner' }),
      n('io', 'OutputNode', { output_map: { x: 'ii.x' } }, { parent_id: 'inner' }),
      n('mo', 'OutputNode', { output_map: { x: 'inner.x' } }, { parent_id: 'mid' }),
      n('oo', 'OutputNode', { output_map: { x: 'mid.x' } }, { parent_id: 'outer' }),
      n('out', 'OutputNode', { output_map: { x: 'outer.x' } }),
    ],
    links: [
      l('in', 'outer'),
      l('oi', 'mid'),
      l('mi', 'inner'),
      l('ii', 'io'),
      l('inner', 'mo'),
      l('mid', 'oo'),
      l('outer', 'out'),
    ],
  });

  describe('limits on definitions', () => {
    it('an AgentNode with max_iterations over the cap is refused (422 naming node, field and limit) on create and replace, and nothing is stored', async () => {
      const before = await workflowCount();
      const res = await engine.http.post('/wf/', { name: 'greedy agent', definition: agentDefinition(51) });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(res.body.detail[0].loc, ['body', 'definition', 'nodes', 1, 'config', 'max_iterations']);
      assert.equal(res.body.detail[0].type, 'value_error');
      assert.equal(res.body.detail[0].input, 51);
      assert.match(
        res.body.detail[0].msg,
        /AgentNode 'agent' has max_iterations 51, over the maximum of 50 \(SPUR_AGENT_MAX_ITERATIONS\)/,
      );
      assert.equal(await workflowCount(), before, 'no workflow stored');

      const id = await created(agentDefinition(50));
      const replaced = await engine.http.put(`/wf/${id}/`, {
        name: 'greedy agent',
        definition: agentDefinition(100_000),
      });
      assert.equal(replaced.status, 422, replaced.text);
      assert.match(replaced.body.detail[0].msg, /max_iterations 100000, over the maximum of 50/);
      const stored = (await engine.http.get(`/wf/${id}/`)).body;
      assert.equal(stored.definition.nodes[1].config.max_iterations, 50, 'the stored definition is unchanged');
    });

    it('nested loops over the total are refused (422 at the loop that crosses it); at the total they are saved', async () => {
      const before = await workflowCount();
      const res = await engine.http.post('/wf/', { name: 'loops', definition: nestedLoops(10, 100, 11) });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(
        res.body.detail.map((d: { loc: unknown[] }) => d.loc),
        [['body', 'definition', 'nodes', 5, 'config', 'num_iterations']],
      );
      assert.match(
        res.body.detail[0].msg,
        /ForLoopNode 'inner' runs 11000 iterations in all \('outer' 10 × 'mid' 100 × 'inner' 11\), over the maximum of 10000 loop iterations \(SPUR_LOOP_MAX_TOTAL_ITERATIONS\)/,
      );
      assert.equal(await workflowCount(), before, 'no workflow stored');

      const atCap = await engine.http.post('/wf/', { name: 'loops at the cap', definition: nestedLoops(10, 100, 10) });
      assert.equal(atCap.status, 200, atCap.text);
      const replaced = await engine.http.put(`/wf/${atCap.body.id}/`, {
        name: 'loops at the cap',
        definition: nestedLoops(1000, 1000, 1),
      });
      assert.equal(replaced.status, 422, replaced.text);
      assert.equal(
        (await engine.http.get(`/wf/${atCap.body.id}/`)).body.definition.nodes[3].config.num_iterations,
        100,
        'the stored definition is unchanged',
      );
    });

    it('a definition stored before the limits does not run: the run is refused naming the limit, no run is recorded and no model is called', async () => {
      const agent = await created(agentDefinition(10));
      const loops = await created(nestedLoops(1, 1, 1));
      // A definition saved under higher limits than the installation's now (an operator lowered them).
      await engine.api.models.Workflow.updateOne(
        { _id: agent },
        { $set: { definition: JSON.stringify(agentDefinition(500)) } },
      );
      await engine.api.models.Workflow.updateOne(
        { _id: loops },
        { $set: { definition: JSON.stringify(nestedLoops(1000, 1000, 1000)) } },
      );

      const run = await engine.http.post(`/wf/${agent}/run/`, { initial_inputs: { in: { task: 'loop forever' } } });
      assert.equal(run.status, 400, run.text);
      assert.match(
        run.body.detail,
        /AgentNode 'agent' has max_iterations 500, over the maximum of 50 \(SPUR_AGENT_MAX_ITERATIONS\)/,
      );
      const started = await engine.http.post(`/wf/${loops}/start_run/`, { initial_inputs: { in: { x: 'a' } } });
      assert.equal(started.status, 400, started.text);
      assert.match(
        started.body.detail,
        /ForLoopNode 'mid' runs 1000000 iterations in all .* over the maximum of 10000 loop iterations/,
      );
      for (const id of [agent, loops])
        assert.deepEqual((await engine.http.get(`/wf/${id}/runs/`)).body, [], `no run of ${id}`);
      assert.equal(fake.requests.length, 0, 'no model was called');
    });
  });

  describe('value references are read only where Spur wrote them', () => {
    function assertNoSecret(texts: string[], where: string) {
      texts.forEach((text, i) => assert.ok(!text.includes(SECRET), `${where} #${i} holds the other run's value`));
    }

    /** The answers about a run: the run with its tasks and the workflow's list of runs. */
    async function runTexts(workflowId: string, runId: string): Promise<string[]> {
      return [(await engine.http.get(`/run/${runId}/`)).text, (await engine.http.get(`/wf/${workflowId}/runs/`)).text];
    }

    it('a run input holding a ref (unsealed, made up, or the real one copied) is refused with 422 naming where; no run starts', async () => {
      const wf = await created({
        nodes: [
          n('in', 'InputNode', { output_schema: { x: 'string' } }),
          n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
        ],
        links: [l('in', 'out')],
      });
      const attempts = [...Object.values(forged()), { [KEY]: victim }];
      for (const ref of attempts) {
        for (const route of ['run', 'start_run']) {
          const res = await engine.http.post(`/wf/${wf}/${route}/`, { initial_inputs: { in: { x: ref } } });
          assert.equal(res.status, 422, res.text);
          assert.deepEqual(res.body.detail[0].loc, ['body', 'initial_inputs', 'in', 'x', KEY]);
          assert.match(res.body.detail[0].msg, /'__spur_value_ref__' is reserved/);
          assertNoSecret([res.text], `${route} answer`);
        }
        const partial = await engine.http.post(`/wf/${wf}/run_partial/`, {
          node_id: 'out',
          initial_inputs: { in: { x: 'a' } },
          partial_outputs: { in: { x: ref } },
        });
        assert.equal(partial.status, 422, partial.text);
        assert.deepEqual(partial.body.detail[0].loc, ['body', 'partial_outputs', 'in', 'x', KEY]);
        assertNoSecret([partial.text], 'run_partial answer');
      }
      assert.deepEqual((await engine.http.get(`/wf/${wf}/runs/`)).body, [], 'no run recorded');
    });

    it('a Python node returning forged refs hands them on as plain data: the next node and every answer see the object, never the stored value', async () => {
      const wf = await created({
        nodes: [
          n('src', 'InputNode', { output_schema: { id: 'string', bytes: 'integer' } }),
          n('py', 'PythonFuncNode', {
            code: [
              `k = "${KEY}"`,
              'i, b = input_model["src"]["id"], int(input_model["src"]["bytes"])',
              'return {"bare": {k: {"id": i, "bytes": b}}, "guessed": {k: {"id": i, "bytes": b, "seal": "AAAAAAAAAAAAAAAAAAAAAA"}}}',
            ].join('\n'),
            output_schema: { bare: 'dict', guessed: 'dict' },
          }),
          n('peek', 'PythonFuncNode', {
            code: 'import json\nreturn {"seen": json.dumps([input_model["py"]["bare"], input_model["py"]["guessed"]])}',
            output_schema: { seen: 'string' },
          }),
          n('out', 'OutputNode', { output_map: { bare: 'py.bare', guessed: 'py.guessed', seen: 'peek.seen' } }),
        ],
        links: [l('src', 'py'), l('py', 'peek'), l('peek', 'out'), l('py', 'out')],
      });
      const res = await engine.http.post(`/wf/${wf}/run/`, {
        initial_inputs: { src: { id: victim.id, bytes: victim.bytes } },
      });
      assert.equal(res.status, 200, res.text);
      assertNoSecret([res.text], 'the blocking answer');
      assert.deepEqual(res.body.py, forged(), 'the forged objects come back as the data they are');
      assert.deepEqual(
        { bare: res.body.out.bare, guessed: res.body.out.guessed },
        forged(),
        'and pass through an output map as such',
      );
      assert.deepEqual(
        JSON.parse(res.body.peek.seen),
        Object.values(forged()),
        'the next node got the objects, not the stored value',
      );
      const [run] = (await engine.http.get(`/wf/${wf}/runs/`)).body;
      assert.equal(run.status, 'COMPLETED');
      assertNoSecret(await runTexts(wf, run.id), 'the run');
    });

    it('a model’s JSON output with a forged ref is plain data to the nodes after it and in every answer', async () => {
      fake.respondWith(() => ({ content: JSON.stringify({ x: forged().bare, y: forged().guessed }) }));
      const schema = JSON.stringify({
        type: 'object',
        properties: { x: { type: 'object' }, y: { type: 'object' } },
        required: ['x', 'y'],
      });
      const wf = await created({
        nodes: [
          n('src', 'InputNode', { output_schema: { q: 'string' } }),
          n('llm', 'SingleLLMCallNode', {
            llm_info: MODEL,
            user_message: '{{src.q}}',
            output_json_schema: schema,
            output_schema: { x: 'dict', y: 'dict' },
          }),
          n('peek', 'PythonFuncNode', {
            code: 'import json\nreturn {"seen": json.dumps([input_model["llm"]["x"], input_model["llm"]["y"]])}',
            output_schema: { seen: 'string' },
          }),
          n('out', 'OutputNode', { output_map: { x: 'llm.x', seen: 'peek.seen' } }),
        ],
        links: [l('src', 'llm'), l('llm', 'peek'), l('peek', 'out'), l('llm', 'out')],
      });
      const res = await engine.http.post(`/wf/${wf}/run/`, {
        initial_inputs: { src: { q: 'answer with the page you read' } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(fake.requests.length, 1);
      assertNoSecret([res.text], 'the blocking answer');
      assert.deepEqual(res.body.llm, { x: forged().bare, y: forged().guessed });
      assert.deepEqual(res.body.out.x, forged().bare);
      assert.deepEqual(JSON.parse(res.body.peek.seen), Object.values(forged()));
      const [run] = (await engine.http.get(`/wf/${wf}/runs/`)).body;
      assert.equal(run.status, 'COMPLETED');
      assertNoSecret(await runTexts(wf, run.id), 'the run');
    });

    it('dataset cells holding forged refs are plain data in a batch: rows, their runs and the output file never hold the stored value', async () => {
      const { bare, guessed } = forged();
      const jsonl = [{ x: bare }, { x: guessed }, { x: { note: 'plain' } }]
        .map((row) => JSON.stringify(row))
        .join('\n');
      const fd = new FormData();
      fd.append('file', new Blob([jsonl], { type: 'application/x-ndjson' }), 'cells.jsonl');
      const ds = await engine.http.post('/ds/?name=forged-cells', fd);
      assert.equal(ds.status, 200, ds.text);
      const wf = await created({
        nodes: [
          n('in', 'InputNode', { output_schema: { x: 'dict' } }),
          n('peek', 'PythonFuncNode', {
            code: 'import json\nreturn {"seen": json.dumps(input_model["in"]["x"])}',
            output_schema: { seen: 'string' },
          }),
          n('out', 'OutputNode', { output_map: { x: 'in.x', seen: 'peek.seen' } }),
        ],
        links: [l('in', 'peek'), l('peek', 'out'), l('in', 'out')],
      });
      const parent = await engine.http.post(`/wf/${wf}/start_batch_run/`, {
        dataset_id: ds.body.id,
        mini_batch_size: 3,
      });
      assert.equal(parent.status, 200, parent.text);
      const done = await waitForRun(engine.http, parent.body.id, isFinal, 120_000);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));

      const file = await engine.http.get(`/of/${(done as { output_file_id: string }).output_file_id}/download/`);
      assert.equal(file.status, 200);
      const lines = file.text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      assert.equal(lines.length, 3);
      const rows = (await engine.http.get(`/wf/${wf}/runs/?page_size=100`)).body.filter(
        (r: { parent_run_id: string | null }) => r.parent_run_id === parent.body.id,
      );
      assert.equal(rows.length, 3);
      const rowTexts = await Promise.all(
        rows.map(async (r: { id: string }) => (await engine.http.get(`/run/${r.id}/`)).text),
      );
      assertNoSecret(
        [
          file.text,
          ...rowTexts,
          (await engine.http.get(`/ds/${ds.body.id}/list_runs/?page_size=100`)).text,
          ...(await runTexts(wf, parent.body.id)),
        ],
        'the batch',
      );
      const seen = rowTexts.map((text) => JSON.parse(JSON.parse(text).outputs.out.seen));
      assert.deepEqual(
        seen
          .filter((x) => KEY in x)
          .map((x) => JSON.stringify(x))
          .sort(),
        [bare, guessed].map((x) => JSON.stringify(x)).sort(),
        'each row’s node got its cell as it was',
      );
    });

    it("a dataset's batch (GET /ds/{id}/list_runs/) and its row answer their stored values, never a reference to them", async () => {
      const big = `big-${randomBytes(4).toString('hex')}${'.'.repeat(4 * REF_BYTES)}`;
      const fd = new FormData();
      fd.append('file', new Blob([JSON.stringify({ x: big })], { type: 'application/x-ndjson' }), 'big.jsonl');
      const ds = await engine.http.post('/ds/?name=big-cell', fd);
      assert.equal(ds.status, 200, ds.text);
      const wf = await created({
        nodes: [
          n('in', 'InputNode', { output_schema: { x: 'string' } }),
          n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
        ],
        links: [l('in', 'out')],
      });
      const parent = await engine.http.post(`/wf/${wf}/start_batch_run/`, { dataset_id: ds.body.id });
      assert.equal((await waitForRun(engine.http, parent.body.id, isFinal, 120_000)).status, 'COMPLETED');
      const listed = await engine.http.get(`/ds/${ds.body.id}/list_runs/`);
      assert.equal(listed.status, 200);
      assert.deepEqual(
        (listed.body as Array<{ id: string }>).map((r) => r.id),
        [parent.body.id],
      );
      assert.ok(!listed.text.includes(KEY), 'no reference in the listing');
      // The row is reached from its parent, as R<parent>-<row>.
      const row = await engine.http.get(`/run/${parent.body.id}-1/`);
      assert.equal(row.status, 200, row.text);
      assert.equal(row.body.outputs?.out?.x, big, 'the row run answers the value itself');
      assert.ok(!row.text.includes(KEY), 'no reference in the row');
    });
  });
});
