import { defineSignal } from '@temporalio/workflow';
import type { NodeFailureDetails } from '../engine/failure-usage';
import { applicationCause } from './failures';
import type { BreakerRule, CallOutcome, WaitReason } from './breaker-contract';

/**
 * A fleet-wide limit on model requests: `key` is a provider (`openai`) or one model
 * (`openai/gpt-4o-mini`). Every request of a run waits for a slot of each limit that applies.
 */
export interface LimitRule {
  key: string;
  max_concurrent?: number;
  requests_per_minute?: number;
  tokens_per_minute?: number;
  /** Stops the limit's calls while its provider keeps failing them (breaker-contract.ts). */
  breaker?: BreakerRule;
}

/** A run's ask for a slot, sent to the limit's workflow (started by the first ask). */
export interface SlotAsk {
  requestId: string;
  /** The run workflow that waits: granted and queued signals go there. */
  workflowId: string;
  /** Tokens the request may use (its prompt's estimate plus its max output): counted against tokens_per_minute. */
  tokens: number;
  /** A holder that never releases (its run terminated) gives its slot back after this long. */
  leaseMs: number;
  /** The rule as the asker read it: the limit follows the latest one. */
  rule: LimitRule;
}

export interface SlotRelease {
  requestId: string;
  /** Tokens the request used, when known: replaces its estimate in the minute's count. */
  tokens?: number;
  /** The provider answered 429 with Retry-After: no slot is granted for this long (applied before the release). */
  holdBackMs?: number;
  /** How the call ended, when known: what the limit's breaker counts. */
  outcome?: CallOutcome;
}

/** Limit workflow → run: the slot is the run's; `waitedMs` since the ask arrived. */
export interface SlotGrant {
  requestId: string;
  key: string;
  waitedMs: number;
  /** The ask waited while the limit's breaker was open: the failure before it spends none of the node's retries. */
  parked?: boolean;
}

export const askSlotSignal = defineSignal<[SlotAsk]>('askSlot');
export const releaseSlotSignal = defineSignal<[SlotRelease]>('releaseSlot');
/** An operator changed (or, null, removed) the rule. */
export const ruleChangedSignal = defineSignal<[LimitRule | null]>('ruleChanged');

export const slotGrantedSignal = defineSignal<[SlotGrant]>('slotGranted');
/** The ask could not be granted at once: the run shows the task waiting. */
export const slotQueuedSignal = defineSignal<[SlotQueued]>('slotQueued');

/** The ask waits; `reason` absent (a limit of before breakers): for a slot. */
export interface SlotQueued {
  requestId: string;
  key: string;
  reason?: WaitReason;
}

/** An operator opens or closes a limit's breaker by hand; `rule`: the limit as stored (the switch may start its workflow). */
export interface BreakerSwitch {
  state: 'open' | 'closed';
  rule: LimitRule;
}

export const breakerSwitchSignal = defineSignal<[BreakerSwitch]>('breakerSwitch');

/** One limit workflow per key (and installation prefix). */
export const limitWorkflowId = (key: string, prefix = '') => `${prefix}limit-${key}`;

/** The keys of the limits that can apply to a model id (`provider/model`): the provider's, the model's. */
export function limitKeysOf(model: string): string[] {
  const slash = model.indexOf('/');
  return slash > 0 ? [model.slice(0, slash), model] : [model];
}

/** Run → activity: ask every limit that applies to the model for a slot. */
export interface AskSlotsInput {
  requestId: string;
  workflowId: string;
  model: string;
  tokens: number;
  leaseMs: number;
}

/** The limits asked (their workflows), empty when none applies: the call goes at once. */
export type AskedLimits = Array<{ key: string; limitWorkflowId: string; breaker?: boolean }>;

/**
 * Run → its model call's activity: the slots the attempt holds. The activity gives them back as
 * soon as the provider has answered (one signal per limit, no workflow round trip), and says so.
 */
export interface HeldSlots {
  requestId: string;
  limitWorkflowIds: string[];
}

/** What a model call's activity adds to its result: its slots went back (else the run sends them). */
export interface SlotsReturned {
  slotsReleased?: boolean;
}

/** The provider's Retry-After a failed attempt carries, if any. */
export function retryAfterOf(err: unknown): number | undefined {
  const details = applicationCause(err)?.details?.[0] as NodeFailureDetails | undefined;
  return typeof details?.retryAfterMs === 'number' && details.retryAfterMs > 0 ? details.retryAfterMs : undefined;
}
