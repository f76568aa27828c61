import { workspaceAttribute, workspaceShare } from '../../db/workspace-scope';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { SpurError } from '../../errors';
import {
  RagWorkflowType,
  type RagIngestInput,
  ragIndexWorkflowId,
  ragIngestWorkflowId,
} from '../../contracts/rag-contract';

export interface RagJobsDeps {
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
}

/** Starts and stops the knowledge-base workflows; the api never parses or embeds itself. */
export function createRagJobs({ temporal, taskQueue, workflowIdPrefix, fairShare }: RagJobsDeps) {
  async function start(type: string, workflowId: string, input: unknown): Promise<void> {
    try {
      await temporal.workflow.start(type, {
        workflowId,
        args: [input],
        typedSearchAttributes: workspaceAttribute(),
        // Parsing and embedding a collection is bulk work: it gives way to runs people wait on.
        ...workspaceShare('bulk', { taskQueue, fairShare }),
      });
    } catch (err) {
      throw new SpurError('unavailable', 'TEMPORAL_UNAVAILABLE', `Could not start the job: ${(err as Error).message}`);
    }
  }
  return {
    startIngest: (input: RagIngestInput) =>
      start(RagWorkflowType.ingest, ragIngestWorkflowId(input.collectionId, input.job, workflowIdPrefix), input),
    startIndex: (indexId: string) =>
      start(RagWorkflowType.index, ragIndexWorkflowId(indexId, workflowIdPrefix), { indexId }),
    /** Ends an index build (its index was deleted); an index no longer building is fine. */
    async stopIndex(indexId: string): Promise<void> {
      try {
        await temporal.workflow
          .getHandle(ragIndexWorkflowId(indexId, workflowIdPrefix))
          .terminate('vector index deleted');
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return;
        if (err instanceof Error && /already completed|not found/i.test(err.message)) return;
        throw err;
      }
    },
  };
}

export type RagJobs = ReturnType<typeof createRagJobs>;
