import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so operators can filter runs in the Temporal Web UI
 * (e.g. `SpurWorkflowId = "S3" AND SpurRunStatus = "FAILED"`). The dev-server scripts register them.
 */
export const SpurWorkflowId = defineSearchAttributeKey('SpurWorkflowId', SearchAttributeType.KEYWORD);
export const SpurRunType = defineSearchAttributeKey('SpurRunType', SearchAttributeType.KEYWORD);
export const SpurRunStatus = defineSearchAttributeKey('SpurRunStatus', SearchAttributeType.KEYWORD);

/** Set by Temporal on every workflow a Schedule starts: the fire's nominal time. */
export const ScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** Name → type, for `temporal server start-dev --search-attribute`. */
export const SEARCH_ATTRIBUTE_TYPES = {
  SpurWorkflowId: 'Keyword',
  SpurRunType: 'Keyword',
  SpurRunStatus: 'Keyword',
} as const;
