import { ApplicationFailure, Context } from '@temporalio/activity';
import { NodeExecutionError } from '../../src/nodes/errors';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { SandboxUnavailableError } from '../../src/nodes/code-execution/sandbox-unavailable';
import { WORKFLOW_CODE_HARNESS } from '../../src/nodes/code-execution/workflow-code-harness';
import { CODE_PARSE_LIMITS, type CodeParseInput, type CodeParseOutput } from '../../src/contracts/code-parse-contract';
import { FailureType } from '../../src/contracts/failures';

/**
 * Runs workflow code in the worker's Python sandbox, the one PythonFuncNode code runs in, with its
 * isolation (no network, no secrets, a private filesystem) and the parse's own time, memory and
 * output limits. Whatever the code did wrong is final (retrying cannot mend it); a worker that dies
 * mid-parse is retried elsewhere.
 */
export function createCodeParseActivities(deps: { pythonSandbox?: PythonSandbox }) {
  return {
    async parseWorkflowCode({ code }: CodeParseInput): Promise<CodeParseOutput> {
      const sandbox = deps.pythonSandbox;
      if (!sandbox)
        throw ApplicationFailure.nonRetryable('This worker has no Python sandbox', FailureType.SandboxUnavailable);
      const activity = Context.current();
      try {
        return await sandbox.run({
          program: WORKFLOW_CODE_HARNESS,
          code,
          input: {},
          timeoutSeconds: CODE_PARSE_LIMITS.timeoutSeconds,
          memoryLimitMb: Math.min(CODE_PARSE_LIMITS.memoryMb, sandbox.settings.maxMemoryMb),
          outputLimitBytes: CODE_PARSE_LIMITS.outputBytes,
          signal: activity.cancellationSignal,
          heartbeat: () => activity.heartbeat(),
        });
      } catch (error) {
        if (error instanceof SandboxUnavailableError)
          throw ApplicationFailure.nonRetryable(error.message, FailureType.SandboxUnavailable);
        if (error instanceof NodeExecutionError)
          throw ApplicationFailure.nonRetryable(error.message, FailureType.CodeRejected);
        throw error;
      }
    },
  };
}
