import assert from 'node:assert/strict';
import { ValueTooLargeError, formatBytes, isTransientStorageError } from '../../src/db/errors';
import { VALUE_REF_KEY, containsValueRef, isValueRef, valueRef } from '../../src/engine/value-ref';

const named = (name: string, message = 'x') => Object.assign(new Error(message), { name });

describe('storage errors: transient or permanent', () => {
  it('retries what goes away by itself: network, server selection, a busy SQLite', () => {
    for (const name of ['MongoNetworkError', 'MongoServerSelectionError', 'MongooseServerSelectionError', 'MongoNotConnectedError']) {
      assert.equal(isTransientStorageError(named(name)), true, name);
    }
    assert.equal(isTransientStorageError(new Error('database is locked')), true);
    assert.equal(isTransientStorageError(new Error('connect ECONNREFUSED 127.0.0.1:27017')), true);
    assert.equal(isTransientStorageError(Object.assign(new Error('x'), { hasErrorLabel: (l: string) => l === 'RetryableWriteError' })), true);
  });

  it('fails for good on what repeats: too large, validation, cast, duplicate, anything unknown', () => {
    assert.equal(isTransientStorageError(named('MongoServerError', 'BSONObj size: 17000000 (0x1036640) is invalid. Size must be between 0 and 16793600(16MB)')), false);
    assert.equal(isTransientStorageError(named('BSONError', 'Document is larger than the maximum size 16777216')), false);
    for (const name of ['ValidationError', 'CastError', 'StrictModeError']) assert.equal(isTransientStorageError(named(name)), false, name);
    assert.equal(isTransientStorageError(named('MongoServerError', 'E11000 duplicate key error')), false);
    assert.equal(isTransientStorageError('a string'), false);
  });

  it('names the value limit in MiB and its variable', () => {
    assert.equal(formatBytes(64 * 1024 * 1024), '64 MiB');
    assert.equal(formatBytes(1536), '1536 bytes');
    assert.equal(formatBytes(128 * 1024), '128 KiB');
    const err = new ValueTooLargeError(3_000_000, 2 * 1024 * 1024, "The output of node 'py' (py)");
    assert.equal(err.message, "The output of node 'py' (py) is 3000000 bytes, over the limit of 2 MiB per value (SPUR_MAX_VALUE_BYTES)");
    assert.equal(err.status, 413);
  });
});

describe('value refs (pure)', () => {
  it('recognises exactly the ref shape', () => {
    const ref = valueRef('R1/abc', 10);
    assert.equal(isValueRef(ref), true);
    assert.equal(isValueRef({ [VALUE_REF_KEY]: { id: 'R1/abc' } }), false);
    assert.equal(isValueRef({ [VALUE_REF_KEY]: { id: 'R1/abc', bytes: 1 }, other: 1 }), false);
    assert.equal(isValueRef([ref]), false);
    assert.equal(isValueRef(null), false);
  });

  it('finds a ref anywhere inside a value', () => {
    assert.equal(containsValueRef({ a: [1, { b: valueRef('R7/x', 1) }] }), true);
    assert.equal(containsValueRef({ a: [1, { b: 'R7/x' }], c: null }), false);
  });
});
