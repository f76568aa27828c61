import { proxyLocalActivities } from '@temporalio/workflow';
import type { ChatActivities } from '../activities';
import type { GraphLevel } from '../../src/engine/graph';
import type { NodeState } from '../../src/engine/node-inputs';
import type { SpurRunInput } from '../../src/contracts/run-contract';
import { PROJECTION_OPTIONS } from './activity-options';

const chat = proxyLocalActivities<ChatActivities>(PROJECTION_OPTIONS);

/**
 * A chatbot run in a session appends its turn (the user message and the OutputNode's
 * `assistant_message`) before it is shown as ended, so the next message of the conversation,
 * sent once this run is seen to end, finds it. Stored once per run id, however often retried.
 */
export async function recordChatTurn(
  input: SpurRunInput,
  level: GraphLevel,
  states: Map<string, NodeState>,
): Promise<void> {
  if (!input.chat) return;
  const outputNode = level.nodes.find((n) => n.node_type === 'OutputNode');
  const state = outputNode ? states.get(outputNode.id) : undefined;
  const answer = state?.status === 'COMPLETED' ? state.output?.assistant_message : undefined;
  if (answer === undefined || answer === null || answer === '') return;
  await chat.appendChatTurn({
    ...input.chat,
    runId: input.runId,
    assistantMessage: typeof answer === 'string' ? answer : JSON.stringify(answer),
  });
}
