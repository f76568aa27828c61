import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PERMISSIONS } from '../../src/access/permissions';

interface Row {
  role: string;
  covers: string;
}

/** The "## Roles and permissions" table of docs/security.md: permission → weakest role and what it covers. */
function documentedTable(): Map<string, Row> {
  const text = readFileSync(path.join(__dirname, '../../docs/security.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Roles and permissions'));
  assert.ok(section, 'docs/security.md has a "Roles and permissions" section');
  const table = new Map<string, Row>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [name = '', role = '', covers = ''] = line
      .split(' | ')
      .map((cell) => cell.replace(/^\| |\s*\|$/g, '').trim());
    const permission = /^`([^`]+)`$/.exec(name)?.[1];
    assert.ok(permission, `a row names its permission in backquotes: ${line}`);
    assert.ok(!table.has(permission), `${permission} is listed once`);
    table.set(permission, { role, covers });
  }
  return table;
}

describe('docs/security.md: the role table', () => {
  it('lists exactly the permissions the gate enforces, each with its weakest role and what it covers, in their order', () => {
    const documented = documentedTable();
    const enforced = new Map(
      Object.entries(PERMISSIONS).map(([name, p]) => [name, { role: p.role, covers: p.covers }]),
    );
    for (const name of enforced.keys()) assert.ok(documented.has(name), `the doc lists '${name}'`);
    for (const name of documented.keys()) assert.ok(enforced.has(name), `'${name}' in the doc is a permission`);
    assert.deepEqual([...documented.keys()], [...enforced.keys()], 'in the same order');
    for (const [name, row] of enforced) assert.deepEqual(documented.get(name), row, name);
  });
});
