import assert from 'node:assert/strict';
import { ValueTooLargeError, formatBytes } from '../../src/db/errors';
import { STATUS_OF_KIND } from '../../src/http/errors';
import {
  UNKNOWN_FAILURE_ATTEMPTS,
  isTooLargeToStore,
  retriesStorageWrite,
  storageFailureKind,
} from '../../src/db/failure-kinds';
import { VALUE_REF_KEY, containsValueRef, isValueRef, valueRef } from '../../src/engine/value-ref';

const named = (name: string, message = 'x') => Object.assign(new Error(message), { name });
const tooLarge = named(
  'MongoServerError',
  'BSONObj size: 17000000 (0x1036640) is invalid. Size must be between 0 and 16793600(16MB)',
);

describe('storage failures: one classifier for the api, the projection and the batch flusher', () => {
  it('calls unavailable what goes away by itself: network, server selection, shutdown codes, a busy SQLite, wrapped or in a bulk write', () => {
    for (const name of [
      'MongoNetworkError',
      'MongoServerSelectionError',
      'MongooseServerSelectionError',
      'MongoNotConnectedError',
      'MongoPoolClearedError',
      'MongoExpiredSessionError',
    ]) {
      assert.equal(storageFailureKind(named(name)), 'unavailable', name);
    }
    assert.equal(storageFailureKind(new Error('database is locked')), 'unavailable');
    assert.equal(storageFailureKind(new Error('connect ECONNREFUSED 127.0.0.1:27017')), 'unavailable');
    assert.equal(storageFailureKind(Object.assign(new Error('x'), { code: 'EPIPE' })), 'unavailable');
    // FerretDB on PostgreSQL passes PostgreSQL's own errors on as InternalError (code 1), as seen in the cluster suite.
    for (const message of [
      '[query_iterator.go:92 postgresql.(*queryIterator).Next] FATAL: terminating connection due to unexpected postmaster exit (SQLSTATE 57P01)',
      '[collection.go:109 postgresql.(*collection).Query] failed to connect to `user=spur database=ferretdb`: server error: FATAL: the database system is not yet accepting connections (SQLSTATE 57P03)',
      'FATAL: connection failure (SQLSTATE 08006)',
    ])
      assert.equal(
        storageFailureKind(Object.assign(named('MongoServerError', message), { code: 1 })),
        'unavailable',
        message,
      );
    assert.equal(
      storageFailureKind(
        Object.assign(named('MongoServerError', 'ERROR: duplicate key value (SQLSTATE 23505)'), { code: 1 }),
      ),
      'unknown',
      'a PostgreSQL error that is not about the connection stays unknown',
    );
    assert.equal(
      storageFailureKind(Object.assign(new Error('interrupted at shutdown'), { code: 11600 })),
      'unavailable',
    );
    assert.equal(
      storageFailureKind(Object.assign(new Error('x'), { hasErrorLabel: (l: string) => l === 'RetryableWriteError' })),
      'unavailable',
    );
    assert.equal(storageFailureKind(new Error('save failed', { cause: named('MongoNetworkError') })), 'unavailable');
    assert.equal(
      storageFailureKind(
        Object.assign(new Error('bulk'), { writeErrors: [{ err: named('MongoNetworkTimeoutError') }] }),
      ),
      'unavailable',
    );
    // An outage wins over what the document looked like.
    assert.equal(
      storageFailureKind(Object.assign(named('ValidationError'), { cause: named('MongoNetworkError') })),
      'unavailable',
    );
  });

  it('calls rejected what repeats on every attempt: too large, validation, cast', () => {
    assert.equal(storageFailureKind(tooLarge), 'rejected');
    assert.equal(
      storageFailureKind(named('BSONError', 'Document is larger than the maximum size 16777216')),
      'rejected',
    );
    assert.equal(storageFailureKind(new RangeError('The value of "offset" is out of range')), 'rejected');
    for (const name of ['ValidationError', 'CastError', 'StrictModeError'])
      assert.equal(storageFailureKind(named(name)), 'rejected', name);
    assert.equal(isTooLargeToStore(tooLarge), true);
    assert.equal(isTooLargeToStore(named('CastError')), false);
  });

  it("leaves the rest unknown (a duplicate key is its callers' business), and writers retry that a bounded number of times", () => {
    assert.equal(storageFailureKind(named('MongoServerError', 'E11000 duplicate key error')), 'unknown');
    assert.equal(storageFailureKind(new Error('something new')), 'unknown');
    assert.equal(storageFailureKind('a string'), 'unknown');
    const surprise = new Error('something new');
    const attempts = [1, 2, 3, 4, 5, 6].filter((attempt) => retriesStorageWrite(surprise, attempt));
    assert.deepEqual(attempts, [1, 2, 3, 4, 5].slice(0, UNKNOWN_FAILURE_ATTEMPTS - 1));
    assert.equal(retriesStorageWrite(named('MongoNetworkError'), 1000), true);
    assert.equal(retriesStorageWrite(tooLarge, 1), false);
  });
});

describe('storage errors', () => {
  it('names the value limit in MiB and its variable', () => {
    assert.equal(formatBytes(64 * 1024 * 1024), '64 MiB');
    assert.equal(formatBytes(1536), '1536 bytes');
    assert.equal(formatBytes(128 * 1024), '128 KiB');
    const err = new ValueTooLargeError(3_000_000, 2 * 1024 * 1024, "The output of node 'py' (py)");
    assert.equal(
      err.message,
      "The output of node 'py' (py) is 3000000 bytes, over the limit of 2 MiB per value (SPUR_MAX_VALUE_BYTES)",
    );
    assert.equal(STATUS_OF_KIND[err.kind], 413);
  });
});

describe('value refs (pure)', () => {
  it('recognises exactly the ref shape', () => {
    const ref = valueRef('R1/abc', 10, 'seal');
    assert.equal(isValueRef(ref), true);
    assert.equal(isValueRef({ [VALUE_REF_KEY]: { id: 'R1/abc' } }), false);
    assert.equal(isValueRef({ [VALUE_REF_KEY]: { id: 'R1/abc', bytes: 1 } }), false, 'a ref without a seal');
    assert.equal(isValueRef({ [VALUE_REF_KEY]: { id: 'R1/abc', bytes: 1 }, other: 1 }), false);
    assert.equal(isValueRef([ref]), false);
    assert.equal(isValueRef(null), false);
  });

  it('finds a ref anywhere inside a value', () => {
    assert.equal(containsValueRef({ a: [1, { b: valueRef('R7/x', 1, 'seal') }] }), true);
    assert.equal(containsValueRef({ a: [1, { b: 'R7/x' }], c: null }), false);
  });
});
