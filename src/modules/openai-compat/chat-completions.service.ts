import { randomUUID } from 'node:crypto';
import { fromJsonText } from '../../db/json-text';
import { SpurError, BadRequestError } from '../../errors';
import type { ClientRuns } from '../../runs/client-runs';
import type { RunReader } from '../../runs/reader';
import type { WorkflowDefinition } from '../../definitions/definition.schema';
import type { WorkflowService } from '../workflows/workflows.service';
import type { ChatCompletionRequest, ChatCompletionResponse, ChatMessageIn } from './chat-completions.schemas';

function textOf(message: ChatMessageIn): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** The answer in a run's outputs: the OutputNode's assistant_message, PySpur's `response.value`, or its first text. */
function answerOf(outputs: Record<string, Record<string, unknown>>, outputNodeId: string | undefined): string {
  const out = outputNodeId ? outputs[outputNodeId] : undefined;
  if (typeof out?.assistant_message === 'string') return out.assistant_message;
  const legacy = (outputs.response as { value?: unknown } | undefined)?.value;
  if (typeof legacy === 'string') return legacy;
  const first = Object.values(out ?? {}).find((v) => typeof v === 'string');
  return typeof first === 'string' ? first : JSON.stringify(out ?? {});
}

export interface ChatCompletionDeps {
  workflows: WorkflowService;
  clientRuns: ClientRuns;
  reader: RunReader;
}

/**
 * PySpur's OpenAI-compatible endpoint, for chatbots: the last user message becomes the InputNode's
 * `user_message`, the turns before it its `message_history` (an OpenAI client sends the whole
 * conversation each time), `user` (or a fresh id) its `session_id`; the run is blocking and the
 * OutputNode's `assistant_message` is the reply. Usage is the run's token usage.
 */
export function createChatCompletionService({ workflows, clientRuns, reader }: ChatCompletionDeps) {
  return {
    async complete(body: ChatCompletionRequest): Promise<ChatCompletionResponse> {
      const workflow = await workflows.load(body.model);
      const definition = fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition;
      const lastUser = body.messages.findLastIndex((m) => m.role === 'user');
      if (lastUser < 0) throw new BadRequestError('No user message found in messages', 'NO_USER_MESSAGE');
      const inputNode = definition.nodes.find((n) => n.node_type === 'InputNode' && n.parent_id === null);
      if (!inputNode) throw new BadRequestError('The workflow has no InputNode, so it cannot be run', 'NO_INPUT_NODE');
      const history = body.messages
        .slice(0, lastUser)
        .filter((m) => m.role === 'user' || m.role === 'assistant')
        .map((m) => ({ role: m.role, content: textOf(m) }));
      const input = {
        user_message: textOf(body.messages[lastUser] as ChatMessageIn),
        session_id: body.user ?? `chatcmpl-${randomUUID()}`,
        message_history: history,
      };
      const outcome = await clientRuns.recordAndAwait('openai', workflow._id, {
        initial_inputs: { [inputNode.id]: input },
        parent_run_id: null,
        files: null,
      });
      if (outcome.kind === 'still-running')
        throw new SpurError(
          'timed_out',
          'RUN_STILL_GOING',
          `Run ${outcome.runId} is still going; poll /api/run/${outcome.runId}/status/`,
        );
      const run = await reader.get(outcome.runId);
      if (run.status === 'FAILED')
        throw new SpurError('upstream_failed', 'RUN_FAILED', run.message ?? `Run ${run.id} failed`);
      const outputNode = definition.nodes.find((n) => n.node_type === 'OutputNode' && n.parent_id === null);
      return {
        id: `chatcmpl-${outcome.runId}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: answerOf(outcome.outputsById, outputNode?.id) },
            finish_reason: 'stop',
          },
        ],
        // OpenAI's usage shape: the tokens (a run's cost is on the run).
        usage: {
          prompt_tokens: run.usage?.prompt_tokens ?? 0,
          completion_tokens: run.usage?.completion_tokens ?? 0,
          total_tokens: run.usage?.total_tokens ?? 0,
        },
      };
    },
  };
}

export type ChatCompletionService = ReturnType<typeof createChatCompletionService>;
