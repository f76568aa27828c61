import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PauseAction } from '../engine/statuses';
import type { DecisionChannel } from '../engine/approvals';
import type { Role } from './roles';

export interface PauseActionRequest {
  action: PauseAction;
  inputs: Record<string, unknown>;
  /** Who decides, as the api established it (src/modules/pauses/deciders.ts). */
  userId: string;
  /** The decider's username when they are a user (`UA…`), recorded with the decision. */
  username?: string | null;
  /** The decider's role when they are an enabled user, else null: what a node's `approvers.roles` match. */
  role?: Role | null;
  comments: string | null;
  /** The pause this action is for; absent = the oldest open pause of the run. */
  pauseId?: string;
  /** Where the decision came from (absent: the API). */
  channel?: DecisionChannel;
}

/** Who decided a pause: a refusal carries the latest one (null before any decision). */
export interface PauseDecider {
  action: PauseAction;
  userId: string;
}

export interface PauseActionResult {
  pauseId: string;
  nodeId: string;
}

/** The refusals PySpur answers with (400); the api maps the failure type to its message. */
export const PauseRefusal = {
  notPaused: 'Run is not in a paused state',
  noPausedTask: 'No paused task found for this run',
  /** A pause that asks several people: each decides once. */
  alreadyDecided: 'This person has already decided on this pause',
} as const;
export const PAUSE_REFUSED = 'PauseActionRefused';
/** The decider is not among the pause's `approvers`: the api answers 403. */
export const PAUSE_FORBIDDEN = 'PauseActionForbidden';
export const notAnApprover = (userId: string, nodeId: string) =>
  `${userId} is not among the approvers of node '${nodeId}': only the users and roles its \`approvers\` names may decide this pause`;
/** A refusal's details: the latest decider, and whether the named pause is still ahead of the workflow. */
export type PauseRefusalDetails = [lastDecider: PauseDecider | null, ahead: boolean];

/**
 * Delivered as an Update so stale and double actions are refused synchronously; the handler
 * returns once the action is applied and recorded, so the api can answer with the run as it is.
 */
export const pauseActionUpdate = defineUpdate<PauseActionResult, [PauseActionRequest]>('pauseAction');

/** The same action as a signal: used when no worker could take the update in time (it is durable). */
export const pauseActionSignal = defineSignal<[PauseActionRequest]>('pauseActionSignal');

export const TIMEOUT_USER = 'system:timeout';

export const pauseRecordId = (runId: string, nodeId: string, n: number) => `${runId}:${nodeId}:${n}`;

/** Whether `pauseId` is one of `pauseRecordId`'s for this run's node (node ids may hold colons: the rest must be a number). */
export const isPauseRecordOf = (pauseId: string, runId: string, nodeId: string): boolean => {
  const prefix = `${runId}:${nodeId}:`;
  return pauseId.startsWith(prefix) && /^[0-9]+$/.test(pauseId.slice(prefix.length));
};
