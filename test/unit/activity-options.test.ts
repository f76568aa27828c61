import assert from 'node:assert/strict';
import { FailureType } from '../../src/contracts/failures';
import {
  PROJECTION_OPTIONS,
  PURE_NODE_OPTIONS,
  ioNodeOptions,
  pureRegionOptions,
} from '../../temporal/workflows/activity-options';

const DEFAULTS = { startToCloseTimeout: '330s', heartbeatTimeout: '20s', maximumAttempts: 4 };

function summary(config: Record<string, unknown>) {
  const o = ioNodeOptions(config);
  return {
    startToCloseTimeout: o.startToCloseTimeout,
    heartbeatTimeout: o.heartbeatTimeout,
    maximumAttempts: o.retry?.maximumAttempts,
  };
}

describe('activity options: ioNodeOptions', () => {
  it('defaults: 300 s + 30 s start-to-close, 20 s heartbeat, 4 attempts with backoff', () => {
    const o = ioNodeOptions({});
    assert.deepEqual(summary({}), DEFAULTS);
    assert.deepEqual(o.retry, {
      initialInterval: 1000,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      maximumAttempts: 4,
      nonRetryableErrorTypes: [FailureType.NodeFailed, FailureType.NotExecutable],
    });
  });

  it('never retries a node error or an unexecutable node type', () => {
    const types = ioNodeOptions({}).retry?.nonRetryableErrorTypes ?? [];
    assert.ok(types.includes('NodeExecutionError'));
    assert.ok(types.includes('NodeNotExecutable'));
  });

  it('takes timeout_seconds, max_retries and heartbeat_timeout_seconds from the config', () => {
    assert.deepEqual(summary({ timeout_seconds: 60, max_retries: 0, heartbeat_timeout_seconds: 5 }), {
      startToCloseTimeout: '90s',
      heartbeatTimeout: '5s',
      maximumAttempts: 1,
    });
    assert.deepEqual(summary({ timeout_seconds: '12', max_retries: '2', heartbeat_timeout_seconds: '7' }), {
      startToCloseTimeout: '42s',
      heartbeatTimeout: '7s',
      maximumAttempts: 3,
    });
  });

  it('keeps the heartbeat timeout at 2 s or more', () => {
    assert.equal(ioNodeOptions({ heartbeat_timeout_seconds: 1 }).heartbeatTimeout, '2s');
    assert.equal(ioNodeOptions({ heartbeat_timeout_seconds: 0.1 }).heartbeatTimeout, '2s');
    assert.equal(ioNodeOptions({ heartbeat_timeout_seconds: 2 }).heartbeatTimeout, '2s');
  });

  it('caps huge values (1 day, 20 attempts, 10 min heartbeat)', () => {
    assert.deepEqual(summary({ timeout_seconds: 1e9, max_retries: 1000, heartbeat_timeout_seconds: 1e6 }), {
      startToCloseTimeout: `${24 * 3600 + 30}s`,
      heartbeatTimeout: '600s',
      maximumAttempts: 20,
    });
  });

  it('falls back to the defaults for nonsense values', () => {
    const nonsense: unknown[] = [null, undefined, 'soon', '', -5, 0, Number.NaN, Number.POSITIVE_INFINITY, {}, []];
    for (const value of nonsense) {
      const got = summary({ timeout_seconds: value, heartbeat_timeout_seconds: value });
      assert.equal(got.startToCloseTimeout, DEFAULTS.startToCloseTimeout, `timeout_seconds ${String(value)}`);
      assert.equal(got.heartbeatTimeout, DEFAULTS.heartbeatTimeout, `heartbeat_timeout_seconds ${String(value)}`);
    }
    for (const value of [null, undefined, 'many', -1, -5, -0.5, true, Number.NaN, Number.POSITIVE_INFINITY, {}]) {
      assert.equal(summary({ max_retries: value }).maximumAttempts, 4, `max_retries ${String(value)}`);
    }
  });

  it('rounds fractional retries down', () => {
    assert.equal(summary({ max_retries: 2.7 }).maximumAttempts, 3);
  });

  it('ignores unrelated config', () => {
    assert.deepEqual(summary({ llm_info: { model: 'x' }, temperature: 0.3 }), DEFAULTS);
  });
});

describe('activity options: pure nodes and projection writes', () => {
  it('pure nodes: short local activities, node errors not retried', () => {
    assert.equal(PURE_NODE_OPTIONS.startToCloseTimeout, '30s');
    assert.equal(PURE_NODE_OPTIONS.retry?.maximumAttempts, 3);
    assert.ok(PURE_NODE_OPTIONS.retry?.nonRetryableErrorTypes?.includes('NodeExecutionError'));
  });

  it('a pure region: the pure-node policy, 30 s per node it holds', () => {
    assert.equal(pureRegionOptions(4).startToCloseTimeout, '120s');
    assert.equal(pureRegionOptions(0).startToCloseTimeout, '30s');
    assert.deepEqual(pureRegionOptions(4).retry, PURE_NODE_OPTIONS.retry);
  });

  it('projection writes retry without an attempt limit, except Mongoose cast and validation errors', () => {
    assert.equal(PROJECTION_OPTIONS.retry?.maximumAttempts, undefined);
    assert.deepEqual(PROJECTION_OPTIONS.retry?.nonRetryableErrorTypes, [
      FailureType.ProjectionRejected,
      'CastError',
      'ValidationError',
      'StrictModeError',
    ]);
  });
});
