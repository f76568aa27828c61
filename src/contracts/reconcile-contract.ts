/** One page of the reconciler's pass over the open runs (ordered by `_id`). */
export interface ReconcilePageInput {
  /** Resume after this run id; null = from the start. */
  after: string | null;
  /** Runs that started less than this long ago are left alone (their api may still be starting them). */
  graceMs: number;
  pageSize: number;
}

export interface ReconcileTally {
  /** Open runs looked at. */
  checked: number;
  /** Never-started runs whose workflow the reconciler started. */
  started: number;
  /** Never-started keyed runs removed: their Idempotency-Key names another run, so no client was answered with them. */
  discarded: number;
  /** Runs marked FAILED (their workflow was terminated, timed out, failed or is gone). */
  failed: number;
  /** Runs marked CANCELED (their workflow was cancelled without saying so). */
  canceled: number;
}

export interface ReconcilePageResult extends ReconcileTally {
  /** Where the next page starts; null when this was the last one. */
  next: string | null;
}

/**
 * One page of the reconciler's look at bulk actions still RUNNING whose workflow Temporal does not
 * have: their api died between recording them and starting it.
 */
export interface RunActionReconcileResult {
  /** Actions looked at. */
  checked: number;
  /** Fully recorded ones whose workflow the reconciler started. */
  started: number;
  /** Ones whose api died before storing every matched run: ended FAILED, nothing acted on. */
  abandoned: number;
  /** Where the next page starts; null when this was the last one. */
  next: string | null;
}

/** What a pass did: to runs, and to bulk actions. */
export interface ReconcilePassTally extends ReconcileTally {
  actionsStarted: number;
  actionsAbandoned: number;
}

/** Input of the `spurReconcile` workflow, which a Temporal Schedule starts every few minutes. */
export interface ReconcileInput {
  graceMs: number;
  pageSize: number;
  /** Pages per pass at most: bounds one pass's work (and history); the next pass goes on. */
  maxPages: number;
}
