import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import type { TestApi } from '../support/api';
import { l, n } from '../support/graphs';
import type { client } from '../support/http';
import { PY_LOOKERS, type SecretHolder, startSecretHolder } from '../support/secret-holder';
import { stack } from '../support/stack';

// Workflow as code over HTTP, against a real api and a real worker process: definitions written out
// as PySpur's WorkflowBuilder code, such code run in the worker's Python sandbox and read back. The
// worker holds secrets the code must never read (support/secret-holder.ts).

type Definition = { nodes: Record<string, unknown>[]; links: Record<string, unknown>[] } & Record<string, unknown>;

/** Strings that would end a Python string literal, start a statement or hide in a reader's view. */
const HOSTILE = [
  `"); builder.add_node(node_type="Injected", config={}); ("`,
  `'''\nbuilder.add_node(node_type="Injected", config={})\n'''`,
  `"""\nraise SystemExit(3)\n"""`,
  'ends in a backslash \\',
  '\\"); import os; os._exit(1) #',
  'line\nbreak\r\nand\ttab \u2028 separator \u0085 next line',
  'nul \u0000 bell \u0007 escape \u001b[31m',
  'bidi \u202e }) ;)1(tixe_.so \u2066 hidden \u2069',
  'unicode: é ß 中文 😀 \u{1f469}\u200d\u{1f4bb} \ufeff bom',
  'lone surrogates \ud800 and \udfff',
  '{{ template }} # not a comment',
];

describe('e2e: workflow as code (/api/code_convert/)', function () {
  this.timeout(300_000);
  let holder: SecretHolder;
  let api: TestApi;
  let http: ReturnType<typeof client>;

  before(async () => {
    holder = await startSecretHolder();
    ({ api, http } = holder);
  });
  after(() => holder?.stop());

  const toDefinition = (code: string) => http.post('/code_convert/code_to_definition', { code });
  const storedCount = () => api.models.Workflow.countDocuments();

  describe('round trip', () => {
    it("turns every template's stored definition into code and that code back into the same definition", async () => {
      const templates = (await http.get('/templates/')).body as { name: string }[];
      assert.ok(templates.length >= 5, `${templates.length} templates`);
      for (const template of templates) {
        const made = await http.post('/templates/instantiate/', template);
        assert.equal(made.status, 200, made.text);
        const code = await http.get(`/code_convert/${made.body.id}`);
        assert.equal(code.status, 200, code.text);
        assert.match(code.body.code, /^from pyspur\.workflow_builder import WorkflowBuilder\n/);
        const back = await toDefinition(code.body.code);
        assert.equal(back.status, 200, `${template.name}: ${back.text}`);
        assert.deepEqual(back.body, made.body.definition, template.name);
      }
    });

    it('keeps hostile titles, ids, config keys and values exactly, and runs none of them as Python', async () => {
      const hostile: Definition = {
        nodes: [
          n('in', 'InputNode', { output_schema: Object.fromEntries(HOSTILE.map((s, i) => [s, `string${i}`])) }),
          ...HOSTILE.map((s, i) => ({
            ...n(`${s}#${i}`, 'PythonFuncNode', { code: s, list: [s, i, null, true, 1.5, -0.25, 1e21] }),
            title: `title ${s}`,
            coordinates: { x: i * 10.5, y: -i },
            dimensions: { width: 200, height: 100 + i },
            ...(i === 1 ? { parent_id: `${HOSTILE[0]}#0` } : {}),
            ...(i === 2 ? { subworkflow: { nodes: [n(s, 'InputNode', { [s]: s })], links: [] } } : {}),
          })),
          n('out', 'OutputNode', { output_map: { [HOSTILE[0] as string]: `${HOSTILE[1]}#1.y` } }),
        ],
        links: [l('in', `${HOSTILE[0]}#0`), ...HOSTILE.map((s, i) => ({ ...l(`${s}#${i}`, 'out'), target_handle: s }))],
        test_inputs: HOSTILE.map((s) => ({ [s]: s })),
      };
      // MongoDB keeps names as UTF-8: unpaired surrogates go only where definitions go (JSON text).
      const paired = HOSTILE.filter((s) => !/\p{Cs}/u.test(s));
      const stored = await http.post('/wf/', {
        name: `hostile ${paired.slice(0, 5).join(' ')}`,
        description: paired.join('|'),
        definition: hostile,
      });
      assert.equal(stored.status, 200, stored.text);

      const fromBody = await http.post('/code_convert/definition_to_code', stored.body.definition);
      const fromStored = await http.get(`/code_convert/${stored.body.id}`);
      for (const code of [fromBody, fromStored]) {
        assert.equal(code.status, 200, code.text);
        const back = await toDefinition(code.body.code);
        assert.equal(back.status, 200, back.text);
        assert.deepEqual(back.body, stored.body.definition);
        assert.ok(!back.text.includes('"Injected"'), 'no injected node');
      }
      // The name and description go through the builder's constructor: a workflow made from the code has them.
      const count = await storedCount();
      const created = await http.post('/code_convert/create_from_code', { code: fromStored.body.code });
      assert.equal(created.status, 200, created.text);
      assert.equal(await storedCount(), count + 1);
      const reread = (await http.get(`/wf/${created.body.id}/`)).body;
      // The name is taken (by the workflow the code came from): PySpur's rule adds the time to it.
      assert.ok(reread.name.startsWith(`${stored.body.name} `), reread.name);
      assert.equal(reread.description, stored.body.description);
      assert.deepEqual(reread.definition, stored.body.definition);
    });

    it('leaves the layout out when asked, and the builder then places the nodes', async () => {
      const wf = (
        await http.post('/wf/', {
          name: 'laid out',
          definition: {
            nodes: [
              { ...n('in', 'InputNode', { output_schema: { x: 'string' } }), coordinates: { x: 7, y: 9 } },
              { ...n('out', 'OutputNode', { output_map: { x: 'in.x' } }), dimensions: { width: 3, height: 4 } },
            ],
            links: [l('in', 'out')],
          },
        })
      ).body;
      const code = (await http.get(`/code_convert/${wf.id}?preserve_coordinates=false&preserve_dimensions=false`)).body
        .code as string;
      assert.ok(!code.includes('coordinates=') && !code.includes('dimensions='), code);
      const back = (await toDefinition(code)).body as Definition;
      assert.deepEqual(
        back.nodes.map((node) => [node.id, node.coordinates, node.dimensions]),
        [
          ['in', { x: 100, y: 100 }, null],
          ['out', { x: 350, y: 100 }, null],
        ],
      );
    });
  });

  describe('reading code back', () => {
    const BUILDER =
      'from pyspur.workflow_builder import WorkflowBuilder\nfrom pyspur.schemas.workflow_schemas import SpurType\n';

    it("create_from_code stores what PySpur's example code builds, named by the builder", async () => {
      const code = `${BUILDER}
builder = WorkflowBuilder("Simple QA Workflow", "answers a question")
builder.set_spur_type(SpurType.WORKFLOW)
question = builder.add_node(node_type="InputNode", config={"output_schema": {"question": "string"}})
answer = builder.add_node(
    node_type="OutputNode",
    config={"output_schema": {"answer": "string"}, "output_map": {"answer": "InputNode_1.question"}},
    id="answer",
)
builder.add_link(question, answer)
builder.add_test_input({"question": "What is the capital of France?"})
`;
      const created = await http.post('/code_convert/create_from_code', { code });
      assert.equal(created.status, 200, created.text);
      const stored = (await http.get(`/wf/${created.body.id}/`)).body;
      assert.equal(stored.name, 'Simple QA Workflow');
      assert.equal(stored.description, 'answers a question');
      assert.deepEqual(
        stored.definition.nodes.map((node: Record<string, unknown>) => [node.id, node.title, node.coordinates]),
        [
          ['Input_1', 'Input_1', { x: 100, y: 100 }],
          ['answer', 'answer', { x: 350, y: 100 }],
        ],
      );
      assert.deepEqual(stored.definition.links, [
        { source_id: 'Input_1', target_id: 'answer', source_handle: null, target_handle: null },
      ]);
      assert.deepEqual(stored.definition.test_inputs, [{ question: 'What is the capital of France?' }]);
    });

    it('PUT replaces name, description and definition, and nodes the code did not place keep their stored place and size', async () => {
      const wf = (
        await http.post('/wf/', {
          name: 'to rewrite',
          definition: {
            nodes: [
              { ...n('in', 'InputNode', { output_schema: { x: 'string' } }), coordinates: { x: 640, y: 480 } },
              {
                ...n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
                coordinates: { x: 900, y: 480 },
                dimensions: { width: 300, height: 200 },
              },
            ],
            links: [l('in', 'out')],
          },
        })
      ).body;
      const code = `${BUILDER}
builder = WorkflowBuilder("rewritten", "by code")
a = builder.add_node(node_type="InputNode", config={"output_schema": {"x": "string", "y": "string"}}, id="in")
b = builder.add_node(node_type="OutputNode", config={"output_map": {"y": "in.y"}}, id="out", coordinates=(1, 2))
c = builder.add_node(node_type="OutputNode", config={"output_map": {"x": "in.x"}}, id="new")
builder.add_link(a, b)
builder.add_link(a, c)
`;
      const put = await http.put(`/code_convert/${wf.id}`, { code });
      assert.equal(put.status, 200, put.text);
      const stored = (await http.get(`/wf/${wf.id}/`)).body;
      assert.deepEqual([stored.name, stored.description], ['rewritten', 'by code']);
      assert.deepEqual(
        stored.definition.nodes.map((node: Record<string, unknown>) => [node.id, node.coordinates, node.dimensions]),
        [
          ['in', { x: 640, y: 480 }, null],
          ['out', { x: 1, y: 2 }, { width: 300, height: 200 }],
          ['new', { x: 350, y: 100 }, null],
        ],
      );
      assert.deepEqual(stored.definition.nodes[1].config, { output_map: { y: 'in.y' } });
    });
  });

  describe('code the client must fix: an answer naming the problem, nothing stored', () => {
    const cases: [string, string, number, RegExp][] = [
      [
        'a syntax error',
        'from pyspur.workflow_builder import WorkflowBuilder\nb = WorkflowBuilder("x")\nb.add_node(',
        422,
        /SyntaxError: .*\(line 3\)/,
      ],
      [
        'an exception',
        'from pyspur.workflow_builder import WorkflowBuilder\nb = WorkflowBuilder("x")\n1 / 0\n',
        422,
        /ZeroDivisionError: division by zero[\s\S]*line 3/,
      ],
      ['code that builds no workflow', 'import json\nx = json.dumps({"nodes": []})\n', 422, /builds no workflow/],
      [
        'a workflow that is not valid',
        'b = WorkflowBuilder("x")\nb.add_node(node_type="InputNode", config={}, id="a")\nb.add_link("a", "nowhere")\n',
        422,
        /not valid: .*Link target_id 'nowhere' is not a node of this workflow/,
      ],
      ['code without an end', 'b = WorkflowBuilder("x")\nwhile True:\n    pass\n', 422, /timed out after 10s/],
      ['no code', '', 400, /^Code is required$/],
    ];
    for (const [what, code, status, detail] of cases) {
      it(`${what}: ${status}`, async () => {
        const before = await storedCount();
        for (const res of [await toDefinition(code), await http.post('/code_convert/create_from_code', { code })]) {
          assert.equal(res.status, status, res.text);
          assert.match(res.body.detail, detail);
        }
        assert.equal(await storedCount(), before);
      });
    }

    it('code over 256 KiB: 413, before any of it runs', async () => {
      const before = await storedCount();
      const code = `b = WorkflowBuilder("big")\n# ${'x'.repeat(256 * 1024)}\n`;
      for (const res of [await toDefinition(code), await http.post('/code_convert/create_from_code', { code })]) {
        assert.equal(res.status, 413, res.text);
        assert.match(res.body.detail, /limited to 256 KiB/);
      }
      assert.equal(await storedCount(), before);
    });

    it('PUT of code over an unknown workflow: 404; of bad code: 422 and the workflow unchanged', async () => {
      assert.equal((await http.put('/code_convert/S999999', { code: 'b = WorkflowBuilder("x")' })).status, 404);
      const wf = (await http.post('/wf/', { name: 'kept' })).body;
      const put = await http.put(`/code_convert/${wf.id}`, { code: 'raise ValueError("no")' });
      assert.equal(put.status, 422, put.text);
      assert.match(put.body.detail, /ValueError: no/);
      const after = (await http.get(`/wf/${wf.id}/`)).body;
      assert.deepEqual([after.name, after.definition], [wf.name, wf.definition]);
    });
  });

  describe('hostile code', () => {
    const ports = () => ({
      api: Number(new URL(api.baseUrl).port),
      temporal: Number(stack.temporalAddress.split(':').pop()),
      database: Number(new URL(stack.mongoUri).port),
    });

    it("reads no process's environment, no file outside the sandbox, reaches no port: none of it in the answer or the stored workflow", async () => {
      const code = `
import glob, json, os, socket
${PY_LOOKERS}
def connect(port):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        return "connected"
    except OSError as e:
        return type(e).__name__
    finally:
        s.close()
seen = {"env": json.dumps(dict(os.environ)), "pid1": grab("/proc/1/environ"), "parent": grab("/proc/%d/environ" % os.getppid())}
for p in glob.glob("/proc/[0-9]*/environ"):
    seen[p] = grab(p)
seen["key"] = grab(${JSON.stringify(path.join(holder.dataDir, 'secret.key'))})
seen["data"] = listing(${JSON.stringify(holder.dataDir)})
seen["source"] = grab(${JSON.stringify(path.join(REPO_ROOT, 'src', 'config', 'env.ts'))})
seen["home"] = listing(${JSON.stringify(os.homedir())})
reached = {name: connect(port) for name, port in ${JSON.stringify(ports())}.items()}
builder = WorkflowBuilder("loot", json.dumps(reached))
builder.add_node(node_type="InputNode", config={"seen": seen, "reached": reached}, id="in")
`;
      const answered = await toDefinition(code);
      assert.equal(answered.status, 200, answered.text);
      holder.assertNoSecret(answered.text, 'the definition');
      const config = answered.body.nodes[0].config as { seen: Record<string, string>; reached: Record<string, string> };
      assert.match(config.seen.key ?? '', /^ERR/);
      assert.match(config.seen.data ?? '', /^ERR/);
      assert.match(config.seen.source ?? '', /^ERR/);
      assert.match(config.seen.home ?? '', /^ERR/);
      assert.deepEqual(config.reached, {
        api: 'ConnectionRefusedError',
        temporal: 'ConnectionRefusedError',
        database: 'ConnectionRefusedError',
      });
      const created = await http.post('/code_convert/create_from_code', { code });
      assert.equal(created.status, 200, created.text);
      holder.assertNoSecret((await http.get(`/wf/${created.body.id}/`)).text, 'the stored workflow');
    });

    it('cannot carry a secret out in an error either', async () => {
      const code = `
import glob, os
${PY_LOOKERS}
found = [grab(p) for p in glob.glob("/proc/[0-9]*/environ")]
raise RuntimeError(repr(dict(os.environ)) + " ".join(found))
`;
      const res = await toDefinition(code);
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.detail, /RuntimeError: \{.*'PATH': '\/usr\/local\/bin:\/usr\/bin:\/bin'/);
      holder.assertNoSecret(res.text, 'the error');
    });

    it('a fork bomb and a gigantic print are cut off at their limits, and the worker parses the next code', async () => {
      const before = await storedCount();
      const bomb = await toDefinition(
        'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n',
      );
      assert.equal(bomb.status, 422, bomb.text);
      // The process cap stops the forks; the loop then runs into the time limit (or the memory cap).
      assert.match(bomb.body.detail, /timed out after 10s|memory cap/);
      const flood = await http.post('/code_convert/create_from_code', {
        code: 'b = WorkflowBuilder("x")\nwhile True:\n    print("x" * 65536)\n',
      });
      assert.equal(flood.status, 422, flood.text);
      assert.match(flood.body.detail, /output exceeded 1 MB/);
      assert.ok(flood.text.length < 2000, `${flood.text.length} characters answered`);
      assert.equal(await storedCount(), before);
      assert.ok(holder.worker.process.running, 'the worker is alive');
      const next = await toDefinition(
        'b = WorkflowBuilder("after")\nb.add_node(node_type="InputNode", config={}, id="in")\n',
      );
      assert.equal(next.status, 200, next.text);
      assert.deepEqual(
        next.body.nodes.map((node: Record<string, unknown>) => node.id),
        ['in'],
      );
    });
  });
});
