import { proxyActivities } from '@temporalio/workflow';
import type { CodeParseActivities } from '../activities';
import { CODE_PARSE_LIMITS, type CodeParseInput, type CodeParseOutput } from '../../src/contracts/code-parse-contract';
import { FailureType } from '../../src/contracts/failures';

const { parseWorkflowCode } = proxyActivities<CodeParseActivities>({
  // Room to wait for one of the worker's sandbox slots (heartbeating) before the code's own limit.
  startToCloseTimeout: `${CODE_PARSE_LIMITS.timeoutSeconds + 50}s`,
  heartbeatTimeout: '10s',
  summary: 'run workflow code in the Python sandbox',
  retry: {
    maximumAttempts: 3,
    nonRetryableErrorTypes: [FailureType.CodeRejected, FailureType.SandboxUnavailable],
  },
});

/**
 * Workflow code to a definition (`/api/code_convert/`): the code runs on a worker, never in the
 * api, which has no sandbox. One activity; the api waits for the result and validates it.
 */
export async function spurCodeParse(input: CodeParseInput): Promise<CodeParseOutput> {
  return parseWorkflowCode(input);
}
