import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { toolFields, toolSpec } from '../../src/nodes/ai/agent/tool-specs';
import { NODE_TYPES } from '../../src/nodes/registry';

/** Names a model must never set: code, templates, URLs, credentials, targets of writes, limits, timeouts, models, retries. */
const NEVER =
  /code|template|url|base|key|token|secret|password|limit|max_|per_page|top_k|timeout|retr|llm|model|channel|provider|mode|recipient|^to$|^from$|message|spreadsheet|index/;

const settableOf = (name: string) => NODE_TYPES.find((t) => t.name === name)?.modelSettable ?? [];

/** The "## Agents and tools" table of docs/security.md: node type → settable fields. */
function documentedTable(): Map<string, string[]> {
  const text = readFileSync(path.join(__dirname, '../../docs/security.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Agents and tools'))!;
  const rows = section.split('\n').filter((line) => /^\| [A-Za-z]/.test(line) && !line.startsWith('| Node type'));
  return new Map(
    rows.map((row) => {
      const [type = '', fields = ''] = row
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim());
      return [type, fields === 'none' ? [] : fields.split(', ')];
    }),
  );
}

describe('agent tools: what a model may set', () => {
  it('each node type declares settable fields among its own config fields, never code, templates, URLs, credentials, recipients, limits, timeouts, models or retries', () => {
    for (const type of NODE_TYPES) {
      for (const field of type.modelSettable ?? []) {
        assert.ok(Object.hasOwn(type.config.shape, field), `${type.name}.${field} is a config field`);
        assert.doesNotMatch(field, NEVER, `${type.name}.${field}`);
      }
    }
    // Where a write goes stays the operator's, even where the same name is settable on reads.
    assert.ok(!settableOf('GitHubCreateIssueNode').includes('repo_name'));
    assert.ok(!settableOf('RedditCreatePostNode').includes('subreddit'));
    assert.ok(!settableOf('RedditCreatePostNode').includes('is_self'));
  });

  it('offers each node type as a tool with its input fields and settable fields only, and tells the engine its config fields', () => {
    for (const type of NODE_TYPES) {
      const node = { id: 't', title: `${type.name} tool`, parent_id: 'a', node_type: type.name, config: {} };
      const spec = toolSpec(node);
      const properties = Object.keys((spec.parameters.properties ?? {}) as object);
      assert.deepEqual(
        properties,
        [...(type.modelSettable ?? [])],
        `${type.name}: every input model is open, so only settable fields are listed`,
      );
      assert.equal(spec.parameters.additionalProperties, true, type.name);
      assert.deepEqual(toolFields(node), {
        settable: [...(type.modelSettable ?? [])],
        config: Object.keys(type.config.shape),
        // An MCP server's tools are routed by name: the model never writes its config (agent-loop.ts).
        ...(type.name === 'MCPToolNode' ? { routed: true } : {}),
      });
    }
  });

  it('a settable field the stored config holds is not required of the model', () => {
    const base = { id: 't', title: 'search', parent_id: 'a', node_type: 'GitHubSearchRepositoriesNode' };
    assert.deepEqual(toolSpec({ ...base, config: {} }).parameters.required, ['query']);
    assert.equal(toolSpec({ ...base, config: { query: 'stored' } }).parameters.required, undefined);
    assert.ok(
      !JSON.stringify(toolSpec({ ...base, config: { query: 'stored' } })).includes('stored'),
      'the stored value is not shown',
    );
  });

  it('docs/security.md lists exactly the declared settable fields', () => {
    const table = documentedTable();
    const declared = NODE_TYPES.filter((t) => (t.modelSettable ?? []).length > 0);
    assert.deepEqual(
      [...table.keys()].filter((k) => k !== 'every other node type').sort(),
      declared.map((t) => t.name).sort(),
    );
    for (const type of declared) assert.deepEqual(table.get(type.name), [...(type.modelSettable ?? [])], type.name);
    assert.deepEqual(table.get('every other node type'), []);
  });
});
