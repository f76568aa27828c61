/** What a retention pass did: runs deleted, and runs old enough to go that were kept because they had not ended. */
export interface RetentionTally {
  deleted_runs: number;
  kept_active: number;
}

/** One page of the pass over expired runs (ordered by `_id`). */
export interface RetentionPageInput {
  /** Resume after this run id; null = from the start. */
  after: string | null;
  /** Runs deleted per page at most (a batch's rows count). */
  pageSize: number;
}

export interface RetentionPageResult extends RetentionTally {
  /** Where the next page starts; null when this was the last one. */
  next: string | null;
}

/** Input of the `spurRetention` workflow, which a daily Temporal Schedule starts. */
export interface RetentionPassInput {
  pageSize: number;
  /** Set when the pass continued as new: where it was and what it did so far. */
  resume?: { after: string | null; tally: RetentionTally };
}
