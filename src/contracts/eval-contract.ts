import type { BatchRunInput } from './batch-contract';

export type EvalEnd = 'COMPLETED' | 'FAILED' | 'CANCELED';

export interface EvalRunInput {
  evalRunId: string;
  /**
   * The batch of the workflow over the suite's rows, run as this workflow's child in child mode:
   * every row is a `spurRun` workflow of its own, visible in Temporal.
   */
  batch: BatchRunInput;
}

export interface EvalFinish {
  evalRunId: string;
  status: EvalEnd;
  message: string | null;
}
