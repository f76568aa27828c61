import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { createSuite, uploadRows } from '../support/evals';

/** The keys of an item of PySpur 0.1.18's `GET /evals/` (api/evals_management.py, `list_evals`). */
const PYSPUR_CARD_KEYS = ['description', 'file_name', 'name', 'num_samples', 'paper_link', 'type'];

describe('e2e: eval suites as stored and as PySpur’s Evals page lists them', function () {
  this.timeout(120_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(async () => engine?.close());

  it('GET /evals/ answers each suite as PySpur’s card (its keys, plus the suite id), num_samples the dataset’s rows', async () => {
    const { http } = engine;
    const rows = Array.from({ length: 7 }, (_, i) => ({ question: `q${i}`, answer: String(i) }));
    const dataset = await uploadRows(http, 'seven', rows);
    const made = await createSuite(http, {
      name: 'seven questions',
      description: 'Seven rows of arithmetic',
      type: 'Reasoning',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'numeric' },
    });
    const cards = (await http.get('/evals/')).body as Record<string, unknown>[];
    const card = cards.find((c) => c.name === 'seven questions');
    assert.ok(card, JSON.stringify(cards));
    assert.deepEqual(Object.keys(card).sort(), [...PYSPUR_CARD_KEYS, 'id'].sort());
    assert.deepEqual(card, {
      id: made.id,
      name: 'seven questions',
      description: 'Seven rows of arithmetic',
      type: 'Reasoning',
      num_samples: 7,
      paper_link: '',
      file_name: made.id,
    });
    assert.equal(made.num_samples, 7);
  });

  it('GET /evals/suites/{id}/ (or by name) answers what POST /evals/suites/ returned', async () => {
    const { http } = engine;
    const dataset = await uploadRows(http, 'two', [
      { q: 'a', alt: 'x', answer: 'A' },
      { q: 'b', alt: 'y', answer: 'B' },
    ]);
    const made = await createSuite(http, {
      name: 'letters by regex',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['q'],
      scorer: { type: 'regex', pattern: 'answer: (\\w)' },
    });
    const byId = await http.get(`/evals/suites/${made.id}/`);
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.body, made);
    assert.deepEqual((await http.get(`/evals/suites/${encodeURIComponent('letters by regex')}/`)).body, made);
    // The scorer as stored, its defaults filled in.
    assert.deepEqual(made.scorer, { type: 'regex', pattern: 'answer: (\\w)', flags: 'i', apply_to_answer: false });
    assert.deepEqual(made.input_columns, ['q']);
    assert.equal(made.num_samples, 2);
  });
});
