import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

// docs/architecture.md draws src/ as floors, top to bottom, and says each folder imports only folders
// below it and that the api's rooms and the worker's wing (temporal/) never import each other. The
// code's own imports are the oracle here: the order is the doc's, the arrows are read from the files.

const ROOT = path.resolve(__dirname, '..', '..');

/** The tree's entries of one top folder, in the order drawn, with the heading (`│  …`) each stands under. */
function treeEntries(top: 'src' | 'temporal'): { name: string; heading: string }[] {
  const text = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const tree = text.slice(text.indexOf('<!-- folder-tree:start -->'), text.indexOf('<!-- folder-tree:end -->'));
  const section = tree.slice(tree.indexOf(`${top}/ `), top === 'src' ? tree.indexOf('temporal/ ') : undefined);
  const entries: { name: string; heading: string }[] = [];
  let heading = '';
  for (const line of section.split('\n')) {
    const head = /^│ {2}(.+)$/.exec(line);
    if (head) heading = head[1] as string;
    const entry = /^[├└]── ([^\s,]+(?:, [^\s,]+)*)/.exec(line);
    if (entry) for (const name of (entry[1] as string).split(', ')) entries.push({ name, heading });
  }
  return entries;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** The repository files one source file imports (relative specifiers only: packages are no room). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import|require)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1] as string);
  return specs.flatMap((spec) => {
    const base = path.resolve(path.dirname(file), spec);
    const found = [`${base}.ts`, path.join(base, 'index.ts'), base].find((c) => existsSync(c) && statSync(c).isFile());
    return found ? [found] : [];
  });
}

/** `src/runs/launcher.ts` → `runs/`; `src/app.ts` → `app.ts`; outside src/: the top folder (`temporal/`). */
function roomOf(file: string): string {
  const parts = path.relative(ROOT, file).split(path.sep);
  if (parts[0] !== 'src') return `${parts[0]}/`;
  return parts.length > 2 ? `${parts[1]}/` : (parts[1] as string);
}

function arrows(from: string): { from: string; to: string; file: string; target: string }[] {
  return sourceFiles(path.join(ROOT, from)).flatMap((file) =>
    importsOf(file)
      .map((target) => ({ from: roomOf(file), to: roomOf(target), file, target }))
      .filter((a) => a.from !== a.to),
  );
}

const show = (a: { file: string; target: string }) =>
  `${path.relative(ROOT, a.file)} -> ${path.relative(ROOT, a.target)}`;

describe("the floors docs/architecture.md draws hold in the code's imports", () => {
  const src = treeEntries('src');
  const order = new Map(src.map((e, i) => [e.name, i]));

  it('every folder and file of src/ imports only what the tree draws below it', () => {
    const upward = arrows('src')
      .filter((a) => order.has(a.to) && (order.get(a.to) as number) <= (order.get(a.from) as number))
      .map(show);
    assert.deepEqual(upward, []);
  });

  it("neither the api's rooms nor what they share import the worker's wing: only src/processes loads temporal/", () => {
    const intoWorker = arrows('src')
      .filter((a) => a.to === 'temporal/' && a.from !== 'processes/')
      .map(show);
    assert.deepEqual(intoWorker, []);
  });

  it("the worker's wing imports none of the api's rooms and no process entry", () => {
    const apiRooms = new Set(
      src.filter((e) => e.heading.startsWith('the api') || e.heading.startsWith('top floor')).map((e) => e.name),
    );
    assert.ok(apiRooms.has('modules/') && apiRooms.has('processes/'), 'the tree names the api and the processes');
    const intoApi = arrows('temporal')
      .filter((a) => apiRooms.has(roomOf(a.target)))
      .map(show);
    assert.deepEqual(intoApi, []);
  });
});
