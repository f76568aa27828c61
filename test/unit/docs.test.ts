import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { CONFIG_VARIABLES, settingDefaults } from '../../src/config/env';
import { loadConfig } from '../../src/config/load-config';

// The docs a user reads: every setting the processes parse is documented, and every link in them
// can be followed by a reader of this repository alone.

const ROOT = path.resolve(__dirname, '..', '..');

function markdownFiles(): string[] {
  const inDocs = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return inDocs(full);
      return name.endsWith('.md') ? [full] : [];
    });
  return [path.join(ROOT, 'README.md'), ...inDocs(path.join(ROOT, 'docs'))];
}

/** Code spans and fenced blocks hold examples, not links: `[x](y)` inside them is text. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** Inline links and images `[t](target "title")`, reference definitions `[r]: target`, autolinks `<scheme:…>`. */
function linkTargets(text: string): string[] {
  const prose = withoutCode(text);
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const references = [...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((m) => m[1] as string);
  const autolinks = [...prose.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((m) => m[1] as string);
  return [...inline, ...references, ...autolinks];
}

const hasScheme = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const headings = withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm);
  for (const [, heading] of headings) {
    const slug = (heading as string)
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

const relative = (file: string) => path.relative(ROOT, file);

describe('docs', () => {
  const files = markdownFiles();

  it('README.md stays under 150 lines: the tour and the links, the rest lives in docs/', () => {
    // Counted as `wc -l` does: newline characters.
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
    assert.ok(lines < 150, `README.md has ${lines} lines`);
  });

  it('docs/configuration.md names every variable src/config/env.ts reads', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    assert.ok(CONFIG_VARIABLES.length > 50, 'the env schema was read');
    const missing = CONFIG_VARIABLES.filter((name) => !doc.includes(`\`${name}\``));
    assert.deepEqual(missing, [], 'variables of src/config/env.ts missing from docs/configuration.md');
  });

  it('docs/configuration.md states each setting’s default as src/config/env.ts has it', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    const defaults = settingDefaults();
    // Defaults derived from other settings or the host, as the loaded config has them with nothing set.
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    const derived: Record<string, unknown> = {
      SPUR_VECTOR_STORE_URI: config.rag.vectorStoreUri === path.join(String(defaults.SPUR_DATA_DIR), 'vectors'),
      SPUR_PUBLIC_URL: config.approvals.publicUrl === `http://localhost:${String(defaults.SPUR_PORT)}`,
      SPUR_PYTHON_MAX_CONCURRENT: defaults.SPUR_PYTHON_MAX_CONCURRENT === Math.max(2, availableParallelism()),
      OTEL_SERVICE_NAME: config.traces?.serviceName === 'spur',
      // Unset here, and chosen where it is used: the prose says how.
      SPUR_SECRET_KEY: defaults.SPUR_SECRET_KEY === undefined,
      SPUR_WORKFLOW_BUNDLE: defaults.SPUR_WORKFLOW_BUNDLE === undefined,
      SPUR_PYTHON: defaults.SPUR_PYTHON === undefined,
      SPUR_CORS_ORIGINS: defaults.SPUR_CORS_ORIGINS === '',
    };
    const wrong: string[] = [];
    let compared = 0;
    for (const [, names = '', cell = ''] of doc.matchAll(
      /^\|\s*(`[A-Z_]+`(?:,\s*`[A-Z_]+`)*)\s*\|\s*([^|]*?)\s*\|/gm,
    )) {
      for (const [, name = ''] of names.matchAll(/`([A-Z_]+)`/g)) {
        if (!CONFIG_VARIABLES.includes(name)) continue; // a development or test tool's variable
        compared++;
        const actual = defaults[name];
        const literal = /^`([^`]*)`/.exec(cell)?.[1];
        let ok: boolean;
        if (name in derived) ok = derived[name] === true;
        else if (literal !== undefined) ok = actual !== undefined && String(actual) === literal;
        else if (/^empty\b/.test(cell)) ok = actual === '';
        else if (/^(none|unset)\b/.test(cell)) ok = actual === undefined || actual === '';
        else ok = false;
        if (!ok) wrong.push(`${name}: documented ${cell}, src/config/env.ts has ${JSON.stringify(actual)}`);
      }
    }
    assert.ok(compared >= CONFIG_VARIABLES.length, `${compared} defaults compared`);
    assert.deepEqual(wrong, []);
  });

  it('README.md and docs/ link only to files of this repository that exist, and to headings that exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const target of linkTargets(text)) {
        if (hasScheme(target)) continue;
        const [pathPart = '', anchor] = target.split('#', 2);
        const resolved =
          pathPart === ''
            ? file
            : path.resolve(path.dirname(file), decodeURIComponent(pathPart.split('?')[0] as string));
        const inside = path.relative(ROOT, resolved);
        if (inside.startsWith('..') || path.isAbsolute(inside)) {
          broken.push(`${relative(file)}: ${target} leaves the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          broken.push(`${relative(file)}: ${target} does not exist`);
          continue;
        }
        if (
          anchor !== undefined &&
          anchor !== '' &&
          resolved.endsWith('.md') &&
          !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)
        ) {
          broken.push(`${relative(file)}: ${target} names no heading of ${relative(resolved)}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it("docs/architecture.md's folder tree names every folder and file at the top of src/ and temporal/, and nothing else", () => {
    const text = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const tree = text.slice(text.indexOf('<!-- folder-tree:start -->'), text.indexOf('<!-- folder-tree:end -->'));
    for (const top of ['src', 'temporal']) {
      const section = tree.slice(tree.indexOf(`${top}/ `), top === 'src' ? tree.indexOf('temporal/ ') : undefined);
      const named = new Set(
        [...section.matchAll(/[├└]── ([^\s,]+(?:, [^\s,]+)*)/g)].flatMap((m) => (m[1] as string).split(', ')),
      );
      const actual = readdirSync(path.join(ROOT, top)).map((name) =>
        statSync(path.join(ROOT, top, name)).isDirectory() ? `${name}/` : name,
      );
      assert.deepEqual([...named].sort(), actual.sort(), `${top}/ in the tree`);
    }
  });

  it('README.md and docs/ name no path outside the repository and no issue numbers', () => {
    const found: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\.\.\/shared|\bissue [0-9]|\(issue/i.test(line))
            found.push(`${relative(file)}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(found, []);
  });

  it('code comments cite no document a user of the repository does not have (the spec notes, their sections)', () => {
    const code = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const full = path.join(dir, name);
        if (statSync(full).isDirectory()) return name === 'fixtures' ? [] : code(full);
        return /\.(ts|mjs)$/.test(name) ? [full] : [];
      });
    const found: string[] = [];
    for (const dir of ['src', 'temporal', 'test', 'bench', 'scripts'])
      for (const file of code(path.join(ROOT, dir)))
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/pyspur-facts|interface\.md|DESIGN\.md|\.\.\/\.\.\/shared\/|§\d/.test(line) && file !== __filename)
              found.push(`${relative(file)}:${i + 1}: ${line.trim()}`);
          });
    assert.deepEqual(found, []);
  });

  it('code comments name only files of the repository (none that moved or went)', () => {
    const everyFile = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const full = path.join(dir, name);
        if (name === 'node_modules' || name.startsWith('.')) return [];
        return statSync(full).isDirectory() ? [full, ...everyFile(full)] : [full];
      });
    const all = ['src', 'temporal', 'test', 'bench', 'scripts', 'docs', 'deploy'].flatMap((d) =>
      everyFile(path.join(ROOT, d)),
    );
    const basenames = new Set([...all, ...readdirSync(ROOT)].map((f) => path.basename(f)));
    // Files the processes write as they run, named where they are written or read.
    const madeAtRunTime = new Set(['state.json']);
    const named = /[\w./-]+\.(?:ts|md|mjs|json|sh|go|ya?ml|py)\b/g;
    const missing: string[] = [];
    for (const file of all.filter((f) => /\.ts$/.test(f) && !relative(f).startsWith(`test${path.sep}`))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const at = line.search(/\/\/|\/\*|^\s*\*/);
          if (at < 0) return;
          for (const name of line.slice(at).match(named) ?? []) {
            if (name.startsWith('.') || name.startsWith('-') || madeAtRunTime.has(path.basename(name))) continue;
            const found = name.includes('/')
              ? [ROOT, path.join(ROOT, 'src'), path.join(ROOT, 'temporal'), path.dirname(file)].some((base) =>
                  existsSync(path.join(base, name)),
                )
              : basenames.has(name);
            if (!found) missing.push(`${relative(file)}:${i + 1}: ${name}`);
          }
        });
    }
    assert.deepEqual(missing, []);
  });
});
