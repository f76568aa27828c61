import { workspaceAttribute, workspaceShare } from '../../db/workspace-scope';
import { randomUUID } from 'node:crypto';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { SpurError } from '../../errors';
import {
  CODE_PARSE_LIMITS,
  type CodeParseInput,
  type CodeParseOutput,
  codeParseWorkflowId,
} from '../../contracts/code-parse-contract';
import { FailureType, applicationCause } from '../../contracts/failures';
import { WorkflowType } from '../../contracts/workflow-names';

export interface CodeParserDeps {
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
  /** Eager start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  /** How long a parse may wait for a worker before the api answers 503: a queue to wait on, then the code's limit. */
  waitSeconds: number;
}

/** Workflow code the client must fix: 422, with what Python said (the error and its line, or the limit). */
export class WorkflowCodeError extends SpurError {
  constructor(message: string) {
    super('validation', 'WORKFLOW_CODE_REJECTED', `Failed to parse code: ${message}`);
  }
}

/**
 * Runs workflow code through `spurCodeParse` on a worker: the api has no Python sandbox and never
 * runs user code itself (the architecture's rule for node code too). Answers the sandbox's output,
 * unchecked; the caller validates it.
 */
export function createCodeParser(deps: CodeParserDeps) {
  return async function runWorkflowCode(code: string): Promise<CodeParseOutput> {
    if (Buffer.byteLength(code, 'utf8') > CODE_PARSE_LIMITS.maxCodeBytes)
      throw new SpurError(
        'too_large',
        'WORKFLOW_CODE_TOO_LARGE',
        `Workflow code is limited to ${CODE_PARSE_LIMITS.maxCodeBytes / 1024} KiB`,
      );
    const input: CodeParseInput = { code };
    const handle = await deps.temporal.workflow.start(WorkflowType.spurCodeParse, {
      workflowId: codeParseWorkflowId(deps.workflowIdPrefix, randomUUID()),
      args: [input],
      workflowExecutionTimeout: `${deps.waitSeconds}s`,
      staticSummary: 'workflow code to a definition',
      requestEagerStart: deps.eagerStart,
      typedSearchAttributes: workspaceAttribute(),
      ...workspaceShare('interactive', deps),
    });
    try {
      return (await handle.result()) as CodeParseOutput;
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      const failure = applicationCause(err.cause);
      if (failure?.type === FailureType.CodeRejected) throw new WorkflowCodeError(failure.message);
      if (failure?.type === FailureType.SandboxUnavailable)
        throw new SpurError('unavailable', 'SANDBOX_UNAVAILABLE', failure.message);
      throw new SpurError(
        'unavailable',
        'WORKFLOW_CODE_NOT_RUN',
        `No worker ran the workflow code within ${deps.waitSeconds} s; try again`,
      );
    }
  };
}

export type RunWorkflowCode = ReturnType<typeof createCodeParser>;
