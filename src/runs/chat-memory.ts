import type { SessionTurns } from '../db/session-turns';
import type { RunDefinition } from '../engine/run-contract';
import type { ChatTurnStart } from '../contracts/run-contract';

/** The input field PySpur fills with a session's history. */
const HISTORY_FIELD = 'message_history';
const LLM_NODE_TYPES = new Set(['SingleLLMCallNode', 'AgentNode', 'BestOfNNode']);

export interface ChatRunInput {
  input: Record<string, unknown>;
  chat?: ChatTurnStart;
}

/**
 * The InputNode fields that carry history: `message_history` (PySpur's) and every field an LLM
 * node with `enable_message_history` reads through `message_history_variable`
 * (`<input node title or id>.<field>`).
 */
export function historyFields(def: RunDefinition): string[] {
  const inputNode = def.nodes.find((n) => n.node_type === 'InputNode' && n.parent_id === null);
  const fields = new Set([HISTORY_FIELD]);
  if (!inputNode) return [...fields];
  for (const node of def.nodes) {
    const { enable_message_history: enabled, message_history_variable: variable } = node.config;
    if (!LLM_NODE_TYPES.has(node.node_type) || enabled !== true || typeof variable !== 'string') continue;
    const [head, field, ...rest] = variable.split('.');
    if (rest.length === 0 && field && (head === inputNode.title || head === inputNode.id)) fields.add(field);
  }
  return [...fields];
}

const isEmptyHistory = (value: unknown) =>
  value === undefined || value === null || (Array.isArray(value) && value.length === 0);

/**
 * Server-side chat memory (PySpur's chatbot rule): a chatbot run whose input has a
 * `session_id` and a `user_message` gets the session's earlier turns in its history fields when
 * the client sent none (PySpur's UI always sends `[]`), and carries the turn to append at the end.
 * Runs of one session in flight at once each see the turns completed before they started.
 */
export function createChatMemory(turns: SessionTurns) {
  return {
    async prepare(
      spurType: string,
      def: RunDefinition,
      input: Record<string, unknown>,
      now: Date,
    ): Promise<ChatRunInput> {
      const { session_id: sessionId, user_message: userMessage } = input;
      if (
        spurType !== 'chatbot' ||
        typeof sessionId !== 'string' ||
        !sessionId ||
        typeof userMessage !== 'string' ||
        !userMessage
      )
        return { input };
      const empty = historyFields(def).filter((f) => isEmptyHistory(input[f]));
      let filled = input;
      if (empty.length > 0) {
        const history = (await turns.messagesOf(sessionId)).map((m) => m.content);
        filled = { ...input, ...Object.fromEntries(empty.map((f) => [f, history])) };
      }
      return { input: filled, chat: { sessionId, userMessage, userTime: now.toISOString() } };
    },
  };
}

export type ChatMemory = ReturnType<typeof createChatMemory>;
