import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so operators can filter runs in the Temporal Web UI
 * (e.g. `SpurWorkflowId = "S3" AND SpurRunStatus = "FAILED"`, `SpurStartedBy = "ada"`). The dev-server
 * scripts, the cluster script and docker-compose's temporal-setup register them.
 */
export const SpurWorkflowId = defineSearchAttributeKey('SpurWorkflowId', SearchAttributeType.KEYWORD);
export const SpurRunType = defineSearchAttributeKey('SpurRunType', SearchAttributeType.KEYWORD);
export const SpurRunStatus = defineSearchAttributeKey('SpurRunStatus', SearchAttributeType.KEYWORD);
/**
 * Who started the run: a user's username, `key:<tag>` for a configured key, `session`, `local`, or
 * the trigger of a run no client asked for (`schedule:SC4`, `webhook:TR2`) — src/runs/run-caller.ts.
 */
export const SpurStartedBy = defineSearchAttributeKey('SpurStartedBy', SearchAttributeType.KEYWORD);

/**
 * The workspace a workflow acts for: set on every start (runs, batches, evals, parses, ingests,
 * schedules), so operators filter by it, and read by the worker to scope each activity (the
 * workflow's outbound interceptor passes it on in WORKSPACE_HEADER).
 */
export const SpurWorkspace = defineSearchAttributeKey('SpurWorkspace', SearchAttributeType.KEYWORD);

/** The activity header that carries a workflow's SpurWorkspace to the activities it schedules. */
export const WORKSPACE_HEADER = 'spur-workspace';

/** Set by Temporal on every workflow a Schedule starts: the fire's nominal time. */
export const ScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** Name → type, for `temporal server start-dev --search-attribute`. */
export const SEARCH_ATTRIBUTE_TYPES = {
  SpurWorkflowId: 'Keyword',
  SpurRunType: 'Keyword',
  SpurRunStatus: 'Keyword',
  SpurStartedBy: 'Keyword',
  SpurWorkspace: 'Keyword',
} as const;
