import type { SpurTemplate } from '../template';
import { link, llmInfo, node, outputs } from './build';

// The UI's chat panel sends each turn to the node id `input_node`; the session supplies message_history.
export const chatbotMemory: SpurTemplate = {
  file_name: 'chatbot-memory.json',
  name: 'Chatbot that remembers the conversation',
  description:
    'A chat assistant: each turn sees the earlier turns of its session, so it can refer back to them. Try it in the chat panel.',
  features: ['Chatbot', 'Message history', 'LLM'],
  definition: {
    nodes: [
      node(
        'input_node',
        'InputNode',
        0,
        outputs({ user_message: 'string', session_id: 'string', message_history: 'array' }),
      ),
      node('assistant', 'SingleLLMCallNode', 1, {
        llm_info: llmInfo(),
        system_message: 'You are a friendly assistant. Use what the user told you earlier in this conversation.',
        user_message: '{{input_node.user_message}}',
        enable_message_history: true,
        message_history_variable: 'input_node.message_history',
        ...outputs({ assistant_message: 'string' }),
      }),
      node('chat_output', 'OutputNode', 2, {
        ...outputs({ assistant_message: 'string' }),
        output_map: { assistant_message: 'assistant.assistant_message' },
      }),
    ],
    links: [link('input_node', 'assistant'), link('assistant', 'chat_output')],
    test_inputs: [{ id: 1, user_message: 'Hi, my name is Ada.', session_id: 'demo', message_history: [] }],
    spur_type: 'chatbot',
  },
};
