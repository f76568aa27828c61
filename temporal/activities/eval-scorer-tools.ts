import { Context } from '@temporalio/activity';
import type { TaskRecord } from '../../src/engine/run-contract';
import { createUsageLedger } from '../../src/db/usage-ledger';
import { usageOfTasks } from '../../src/db/eval-row-runs';
import { NodeExecutionError } from '../../src/nodes/errors';
import { executeSingleLlmCall } from '../../src/nodes/ai/llm/single-call';
import { singleLlmCallNode } from '../../src/nodes/ai/single-llm-call-node';
import { asText } from '../../src/evals/answer-text';
import type { Example, ScorerTools, Verdict } from '../../src/evals/scorers';
import type { ScorerConfig } from '../../src/evals/scorer-config';
import { activityNodeContext, type NodeContextDeps } from './node-context';

/** A Python scorer gets at most this long and this much memory per example. */
const PYTHON_TIMEOUT_S = 10;
const PYTHON_MEMORY_MB = 256;
const JUDGE_NODE = 'eval_judge';

const VERDICT_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { correct: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['correct'],
});

/** Where the judge's calls are booked: the ledger row of the eval run, under the evaluated workflow. */
export interface JudgeBooking {
  evalRunId: string;
  workflowId: string;
  row: number;
}

/**
 * The scorers that leave the activity's process: a judge model called through the LLM node's
 * provider path (priced, and booked in the usage ledger under the eval run), and Python code run
 * in the worker's sandbox, never in the worker itself.
 */
export function createScorerTools(deps: NodeContextDeps, booking: JudgeBooking): ScorerTools {
  async function bookJudge(ctx: ReturnType<typeof activityNodeContext>, start: string) {
    const usage = ctx.usage();
    if (!usage) return undefined;
    const task: TaskRecord = {
      id: `judge-${booking.row + 1}`,
      node_id: JUDGE_NODE,
      status: 'COMPLETED',
      inputs: null,
      outputs: null,
      error: null,
      start_time: start,
      end_time: new Date().toISOString(),
      subworkflow_output: null,
      usage,
    };
    // Keyed by eval run, row and model: a retried pass writes the same record.
    await createUsageLedger(deps.models).record([
      { runId: booking.evalRunId, workflowId: booking.workflowId, apiKey: 'eval', tasks: [task] },
    ]);
    return usageOfTasks([task]);
  }

  return {
    async judge(config: Extract<ScorerConfig, { type: 'llm_judge' }>, example: Example): Promise<Verdict> {
      const expected = asText(example.answer).trim();
      const predicted = asText(example.output);
      const ctx = activityNodeContext(deps, booking.evalRunId, JUDGE_NODE, 'eval judge');
      const start = new Date().toISOString();
      const call = singleLlmCallNode.config.parse({
        llm_info: { model: config.model, max_tokens: 400, temperature: 0 },
        system_message: `You grade answers against a reference answer. Rubric: ${config.rubric}\nReply with JSON {"correct": true|false, "reason": "<one sentence>"}.`,
        // The texts are template inputs, never template source: an answer cannot inject template code.
        user_message: 'Reference answer:\n{{expected}}\n\nAnswer to grade:\n{{predicted}}',
        output_json_schema: VERDICT_SCHEMA,
      });
      let output: Record<string, unknown>;
      try {
        output = await executeSingleLlmCall(call, { expected, predicted }, ctx);
      } catch (err) {
        // A refusal no retry mends (an unknown key, a reply that is no verdict) scores the row wrong,
        // saying why; a transient failure retries the activity, which picks up at this row.
        if (err instanceof NodeExecutionError)
          return { correct: false, predicted, expected, note: `The judge failed: ${err.message}` };
        throw err;
      }
      const usage = await bookJudge(ctx, start);
      const reason = typeof output.reason === 'string' ? output.reason : undefined;
      return {
        correct: output.correct === true,
        predicted,
        expected,
        ...(reason ? { note: reason } : {}),
        ...(usage ? { usage } : {}),
      };
    },

    async python(config: Extract<ScorerConfig, { type: 'python' }>, example: Example): Promise<Verdict> {
      const expected = asText(example.answer).trim();
      const predicted = asText(example.output);
      const sandbox = deps.pythonSandbox;
      if (!sandbox) return { correct: false, predicted, expected, note: 'This worker has no Python sandbox' };
      const activity = Context.current();
      try {
        const result = await sandbox.run({
          code: config.code,
          input: { predicted: example.output ?? null, expected: example.answer ?? null, row: example.row },
          timeoutSeconds: PYTHON_TIMEOUT_S,
          memoryLimitMb: Math.min(PYTHON_MEMORY_MB, sandbox.settings.maxMemoryMb),
          signal: activity.cancellationSignal,
          heartbeat: () => activity.heartbeat(),
          outputLimitBytes: 1024 * 1024,
        });
        const note = typeof result.note === 'string' ? result.note.slice(0, 2000) : undefined;
        return { correct: result.correct === true, predicted, expected, ...(note ? { note } : {}) };
      } catch (err) {
        if (activity.cancellationSignal.aborted) throw err;
        return { correct: false, predicted, expected, note: `The Python scorer failed: ${(err as Error).message}` };
      }
    },
  };
}
