import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

// One persistence pattern: each collection has one module that writes it. A second writer beside
// it (a service updating a model directly) would bypass what that module keeps consistent.

const ROOT = path.resolve(__dirname, '..', '..');
const WRITE =
  /\.(create|insertMany|updateOne|updateMany|replaceOne|deleteOne|deleteMany|bulkWrite|findOneAndUpdate|findByIdAndUpdate|findOneAndDelete|findByIdAndDelete)\(/;

const READ = /\.(find|findById|findOne|exists|countDocuments|estimatedDocumentCount|aggregate|distinct)\(/;

/** The run's records are written together (a status with its event head, tasks with their pauses): one folder owns them. */
const RUN_RECORDS = new Set(['Run', 'RunTasks', 'Pause', 'RunEvent', 'TaskDelta']);
const RUN_RECORDS_HOME = 'src/db/runs/';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

function modelNames(): string[] {
  const index = readFileSync(path.join(ROOT, 'src/db/models/index.ts'), 'utf8');
  return [...index.matchAll(/^\s+(\w+): conn\.model</gm)].map((m) => m[1] as string);
}

/** Files that call a method matching `method` on each model, by its name or a local alias (`const { IdempotencyKey: Key } = models`). */
function callersOf(models: string[], method: RegExp): Map<string, Set<string>> {
  const writers = new Map(models.map((m) => [m, new Set<string>()]));
  const files = [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'temporal'))];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const aliases = new Map(models.map((m) => [m, m]));
    for (const m of text.matchAll(/\b(\w+)\s*:\s*(\w+)\s*[,}]/g))
      if (models.includes(m[1] as string)) aliases.set(m[2] as string, m[1] as string);
    for (const line of text.split('\n')) {
      for (const [alias, model] of aliases) {
        const call = new RegExp(`\\b${alias}${method.source}`);
        if (call.test(line)) writers.get(model)?.add(path.relative(ROOT, file));
      }
    }
  }
  return writers;
}

describe('one writer per collection', () => {
  const models = modelNames();
  const writers = callersOf(models, WRITE);

  it('finds the models and their writers (the scan itself works)', () => {
    assert.ok(models.includes('Run') && models.includes('Workflow'), models.join(', '));
    assert.ok(writers.get('Run')?.size, 'the run records are written somewhere');
    assert.ok(writers.get('IdempotencyKey')?.has('src/db/idempotency-keys.ts'), 'an aliased model is found');
  });

  it(`has the run's records written only inside ${RUN_RECORDS_HOME}`, () => {
    for (const model of RUN_RECORDS) {
      const outside = [...(writers.get(model) ?? [])].filter((f) => !f.startsWith(RUN_RECORDS_HOME));
      assert.deepEqual(outside, [], `${model} is written outside ${RUN_RECORDS_HOME}`);
    }
  });

  it('has every other collection written by one file', () => {
    for (const [model, files] of writers) {
      if (RUN_RECORDS.has(model)) continue;
      assert.ok(files.size <= 1, `${model} is written by ${[...files].join(', ')}`);
    }
  });
});

describe('one reader of runs', () => {
  /** The run's owner: its records' folder, and the api's reader of whole runs with their tasks. */
  const OWNERS = ['src/db/runs/', 'src/runs/reader.ts'];
  const readers = callersOf(modelNames(), READ).get('Run') ?? new Set<string>();

  it('finds the readers of the Run model (the scan itself works)', () => {
    assert.ok(readers.has('src/runs/reader.ts'), [...readers].join(', '));
  });

  it('has the Run model read only by its owner (src/db/runs, src/runs/reader.ts)', () => {
    const outside = [...readers].filter((f) => !OWNERS.some((o) => f.startsWith(o)));
    assert.deepEqual(outside, [], 'read the run through its repository (src/db/runs/run-lookups.ts) or reader');
  });
});
