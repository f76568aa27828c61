import { ActivityFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import type { NodeFailureDetails, ProviderFailureKind } from '../engine/failure-usage';
import { applicationCause } from './failures';

/**
 * A provider limit's breaker (docs/runs.md#breaker): `failures` provider failures within
 * `window_seconds` open it; while open no call of the limit goes out and its runs wait in place;
 * after `open_seconds` one probe call goes, whose success closes it.
 */
export interface BreakerRule {
  failures: number;
  window_seconds: number;
  open_seconds: number;
}

export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;
export type BreakerStateName = (typeof BREAKER_STATES)[number];

/** Who opened the breaker: its provider's failures (it probes by itself), or an operator (it stays open until closed). */
export type BreakerOpener = 'failures' | 'operator';

/** A breaker's state as its limit workflow records it in the limit's entry (times in ms since the epoch). */
export interface BreakerRecord {
  state: BreakerStateName;
  /** When the breaker took this state. */
  since: number;
  opened_by: BreakerOpener | null;
  /** The counted failures' times, newest last, at most the rule's `failures`. */
  failure_times: number[];
}

/**
 * How a call ended, as a release tells its limit: `ok` the provider answered (a success, or a
 * request of the caller's it refused); otherwise how the provider failed. No outcome at all (a
 * cancelled call, a failure before any request) tells a breaker nothing.
 */
export type CallOutcome = 'ok' | ProviderFailureKind;

export type { WaitReason } from '../engine/run-contract';

/**
 * How a failed attempt of a model call failed at the provider, if it did: the kind its activity
 * gave the failure, or a timeout of the attempt's activity itself (the provider never answered).
 */
export function failureOutcomeOf(err: unknown): ProviderFailureKind | undefined {
  const details = applicationCause(err)?.details?.[0] as NodeFailureDetails | undefined;
  if (details?.failureKind) return details.failureKind;
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (
    cause instanceof TimeoutFailure &&
    (cause.timeoutType === TimeoutType.START_TO_CLOSE || cause.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE)
  )
    return 'timeout';
  return undefined;
}
