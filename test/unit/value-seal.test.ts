import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createValueSeal } from '../../src/db/value-seal.js';
import { VALUE_REF_KEY, reservedKeyPath, valueRef } from '../../src/engine/value-ref.js';
import { StartRunRequest } from '../../src/modules/runs/runs.schemas.js';
import { ResumeRunRequest } from '../../src/modules/pauses/pauses.schemas.js';

describe('value ref seals', () => {
  const key = randomBytes(32);
  const seals = createValueSeal(key);
  const id = 'R12/4f2a';

  it('accepts a ref it sealed', () => {
    assert.equal(seals.isSealed(valueRef(id, 300, seals.seal(id, 300))), true);
    assert.equal(
      createValueSeal(Buffer.from(key)).isSealed(valueRef(id, 300, seals.seal(id, 300))),
      true,
      'another process with the same key',
    );
  });

  it('refuses a ref with no seal, a made-up seal, a seal of another key, or a seal moved to another id or size', () => {
    const seal = seals.seal(id, 300);
    assert.equal(seals.isSealed({ [VALUE_REF_KEY]: { id, bytes: 300 } }), false);
    assert.equal(seals.isSealed(valueRef(id, 300, 'AAAAAAAAAAAAAAAAAAAAAA')), false);
    assert.equal(seals.isSealed(valueRef(id, 300, '')), false);
    assert.equal(seals.isSealed(valueRef(id, 300, createValueSeal(randomBytes(32)).seal(id, 300))), false);
    assert.equal(seals.isSealed(valueRef('R13/4f2a', 300, seal)), false);
    assert.equal(seals.isSealed(valueRef(id, 301, seal)), false);
    assert.equal(seals.isSealed({ [VALUE_REF_KEY]: { id, bytes: 300, seal }, extra: 1 }), false);
  });

  it('finds the reserved key anywhere in a client value, whatever the object holds', () => {
    assert.deepEqual(reservedKeyPath({ in: { x: [1, { [VALUE_REF_KEY]: 'anything' }] } }), [
      'in',
      'x',
      1,
      VALUE_REF_KEY,
    ]);
    assert.deepEqual(reservedKeyPath({ in: { [VALUE_REF_KEY]: { id, bytes: 1 }, other: 2 } }), ['in', VALUE_REF_KEY]);
    assert.equal(reservedKeyPath({ in: { x: `{"${VALUE_REF_KEY}": {}}` } }), null, 'the key inside a string is text');
    assert.equal(reservedKeyPath(null), null);
  });

  it('refuses run inputs and pause inputs with the key at request validation, naming where', () => {
    const run = StartRunRequest.safeParse({ initial_inputs: { in: { x: { [VALUE_REF_KEY]: { id, bytes: 1 } } } } });
    assert.deepEqual(
      run.error?.issues.map((i) => i.path),
      [['initial_inputs', 'in', 'x', VALUE_REF_KEY]],
    );
    const pause = ResumeRunRequest.safeParse({
      inputs: { note: { [VALUE_REF_KEY]: 1 } },
      user_id: 'u',
      action: 'APPROVE',
    });
    assert.deepEqual(
      pause.error?.issues.map((i) => i.path),
      [['inputs', 'note', VALUE_REF_KEY]],
    );
    assert.equal(StartRunRequest.safeParse({ initial_inputs: { in: { x: 'plain' } } }).success, true);
  });
});
