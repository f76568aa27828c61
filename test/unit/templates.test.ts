import assert from 'node:assert/strict';
import { NodeExecutionError } from '../../src/nodes/errors.js';
import { renderTemplate } from '../../src/nodes/templates.js';

const INPUT = {
  input_node: {
    question: 'What is 2+2?',
    n: 5,
    ratio: 0.25,
    ok: true,
    nil: null,
    tags: ['a', 'b', 'c'],
    nested: { inner: { value: 'deep' } },
    items: [{ name: 'x' }, { name: 'y' }],
  },
  SingleLLMCallNode_1: { response: 'four' },
};

function render(template: string, context: Record<string, unknown> = INPUT): Promise<string> {
  return renderTemplate(template, context);
}

async function assertFails(template: string, pattern: RegExp): Promise<void> {
  await assert.rejects(
    () => render(template),
    (err: unknown) => err instanceof NodeExecutionError && pattern.test(err.message),
  );
}

describe('renderTemplate (Jinja semantics)', () => {
  it('renders dotted access into predecessor outputs', async () => {
    assert.equal(
      await render('Q: {{input_node.question}} / A: {{ SingleLLMCallNode_1.response }}'),
      'Q: What is 2+2? / A: four',
    );
    assert.equal(await render('{{ input_node.nested.inner.value }} {{ input_node["question"] }}'), 'deep What is 2+2?');
    assert.equal(await render('{{ input_node.items[1].name }} {{ input_node.tags[-1] }}'), 'y c');
  });

  it('renders plain text and an empty template unchanged', async () => {
    assert.equal(await render('no variables here'), 'no variables here');
    assert.equal(await render(''), '');
  });

  it('renders an unknown name or a missing field as an empty string', async () => {
    assert.equal(await render('[{{ unknown }}]'), '[]');
    assert.equal(await render('[{{ input_node.missing }}]'), '[]');
    assert.equal(await render('[{{ input_node.nested.missing }}]'), '[]');
    assert.equal(await render('[{{ input_node.tags[10] }}]'), '[]');
    // Prototype members are not fields.
    assert.equal(await render('[{{ input_node.constructor }}][{{ input_node.toString }}]'), '[][]');
  });

  it('fails when reading an attribute of an undefined value, naming it', async () => {
    await assertFails('{{ unknown.x }}', /'unknown' is undefined.*'x'/);
    await assertFails('{{ input_node.missing.x }}', /'input_node\.missing' is undefined.*'x'/);
    await assertFails('{{ input_node.nested.inner.missing.x }}', /'input_node\.nested\.inner\.missing' is undefined/);
    await assertFails('{{ input_node.tags[10].x }}', /is undefined/);
    await assertFails('{% if unknown.flag %}yes{% endif %}', /'unknown' is undefined/);
  });

  it('treats attributes of None and of strings as undefined (no error one level down)', async () => {
    assert.equal(await render('[{{ input_node.nil.x }}][{{ input_node.question.x }}]'), '[][]');
  });

  it('prints values the way Python str() does', async () => {
    assert.equal(await render('{{ input_node.n }} {{ input_node.ratio }} {{ input_node.n * 2 + 1 }}'), '5 0.25 11');
    assert.equal(
      await render('{{ input_node.ok }} {{ input_node.nil }} {{ None }} {{ False }}'),
      'True None None False',
    );
    assert.equal(await render('{{ input_node.tags }}'), "['a', 'b', 'c']");
    assert.equal(await render('{{ input_node.nested }}'), "{'inner': {'value': 'deep'}}");
  });

  it('runs loops with loop variables, over lists and dict items', async () => {
    assert.equal(
      await render(
        '{% for t in input_node.tags %}{{ loop.index }}:{{ t }}{% if not loop.last %},{% endif %}{% endfor %}',
      ),
      '1:a,2:b,3:c',
    );
    assert.equal(await render('{% for i in input_node.items %}<{{ i.name }}>{% endfor %}'), '<x><y>');
    assert.equal(
      await render('{% for k, v in input_node.nested.inner.items() %}{{ k }}={{ v }}{% endfor %}'),
      'value=deep',
    );
    assert.equal(await render('{% for k in input_node.nested.keys() %}{{ k }}{% endfor %}'), 'inner');
    assert.equal(await render('{{ input_node.nested.get("nope", "fallback") }}'), 'fallback');
    assert.equal(await render('{% for t in unknown %}x{% else %}empty{% endfor %}'), 'empty');
  });

  it('applies filters', async () => {
    assert.equal(await render('{{ input_node.question | upper }}'), 'WHAT IS 2+2?');
    assert.equal(await render('{{ input_node.tags | join("-") }} {{ input_node.tags | length }}'), 'a-b-c 3');
    assert.equal(await render('{{ input_node.missing | default("none given") }}'), 'none given');
    assert.equal(
      await render('{{ input_node.question | replace("2+2", "two plus two") | lower }}'),
      'what is two plus two?',
    );
  });

  it('serialises with |tojson like Jinja (sorted keys, Python separators, HTML-safe, ASCII)', async () => {
    assert.equal(await render('{{ input_node.nested | tojson }}'), '{"inner": {"value": "deep"}}');
    assert.equal(
      await render('{{ v | tojson }}', { v: { b: 1, a: [true, null, 'x'] } }),
      '{"a": [true, null, "x"], "b": 1}',
    );
    assert.equal(
      await render('{{ v | tojson }}', { v: "<a href='x'>&é" }),
      '"\\u003ca href=\\u0027x\\u0027\\u003e\\u0026\\u00e9"',
    );
    assert.equal(await render('{{ v | tojson(2) }}', { v: { a: [1] } }), '{\n  "a": [\n    1\n  ]\n}');
  });

  it('serialises with |dump (nunjucks JSON.stringify)', async () => {
    assert.equal(await render('{{ input_node.tags | dump }}'), '["a","b","c"]');
    assert.equal(await render('{{ input_node.nested | dump(2) }}'), '{\n  "inner": {\n    "value": "deep"\n  }\n}');
  });

  it('does not HTML-escape output', async () => {
    assert.equal(await render('{{ v }}', { v: '<b>"x" & y</b>' }), '<b>"x" & y</b>');
  });

  it('turns syntax errors into NodeExecutionError', async () => {
    await assertFails('{% if input_node.ok %}unclosed', /Error rendering template/);
    await assertFails('{{ input_node.question ', /Error rendering template/);
    await assertFails('{% for %}', /Error rendering template/);
    await assertFails('{{ 1 + }}', /Error rendering template/);
  });

  it('gives templates no way to reach Function (no code execution)', async () => {
    await assertFails('{{ range.constructor("return process")() }}', /Error rendering template/);
    await assertFails('{{ input_node.question.constructor.constructor("return 1")() }}', /Error rendering template/);
  });

  it('runs macros, call blocks, set and filter blocks, switch, cycler and joiner', async () => {
    assert.equal(
      await render(
        '{% macro greet(who, punct="!") %}Hi {{ who }}{{ punct }}{% endmacro %}{{ greet("Ada") }} {{ greet("Bob", "?") }} {{ greet(who="Cy", punct=".") }}',
      ),
      'Hi Ada! Hi Bob? Hi Cy.',
    );
    assert.equal(
      await render(
        '{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap("p") %}in{% endcall %}',
      ),
      '<p>in</p>',
    );
    assert.equal(
      await render(
        '{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{% endfor %}{{ x }} {% set b %}got {{ x }}{% endset %}{{ b | upper }} {% filter lower %}LOUD{% endfilter %}',
      ),
      '4 GOT 4 loud',
    );
    assert.equal(
      await render('{% switch 5 %}{% case 4 %}four{% case 5 %}five{% default %}other{% endswitch %}'),
      'five',
    );
    assert.equal(
      await render(
        '{% set c = cycler("odd", "even") %}{% for i in [1, 2, 3] %}{{ c.next() }},{% endfor %}{{ c.current }} {% set j = joiner("|") %}{% for i in [1, 2] %}{{ j() }}{{ i }}{% endfor %}',
      ),
      'odd,even,odd,odd 1|2',
    );
    assert.equal(
      await render('{{ 2e3 }} {{ range(3) | join(",") }} {{ range(10, 0, -4) | join(",") }}'),
      '2000 0,1,2 10,6,2',
    );
  });

  it('reads the attribute argument of sort, join, sum, selectattr and groupby as a field, never a prototype member', async () => {
    const items = {
      items: [
        { name: 'b', v: 2, g: 'x' },
        { name: 'a', v: 1, g: 'y' },
        { name: 'c', v: 3, g: 'x' },
      ],
    };
    assert.equal(
      await render(
        '{{ items | sort(attribute="name") | join(",", attribute="name") }} {{ items | sum(attribute="v") }} {{ items | selectattr("v") | length }}',
        items,
      ),
      'a,b,c 6 3',
    );
    assert.equal(
      await render('{% for k, group in items | groupby("g") %}{{ k }}={{ group | length }};{% endfor %}', items),
      'x=2;y=1;',
    );
    assert.equal(
      await render(
        '[{{ items | join(",", attribute="constructor") }}][{{ items | selectattr("constructor") | length }}]',
        items,
      ),
      '[,,][0]',
    );
  });

  it("offers Python's common string methods, and no JavaScript method", async () => {
    assert.equal(
      await render('[{{ v.strip().upper() }}] {{ v.split() }} {{ "a,b".split(",") }} {{ v.startswith("  W") }}', {
        v: '  What is 2+2? ',
      }),
      "[WHAT IS 2+2?] ['What', 'is', '2+2?'] ['a', 'b'] True",
    );
    assert.equal(
      await render('[{{ v.toUpperCase }}][{{ v.constructor }}][{{ v.upper.constructor }}]', { v: 'x' }),
      '[][][]',
    );
  });

  it('names the field in the error message when given', async () => {
    await assert.rejects(
      () => renderTemplate('{{ a.b }}', {}, 'user_message'),
      /Error rendering user_message: .*'a' is undefined/,
    );
  });
});
