import { l, n } from './graphs';

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    user_message: { type: 'string' },
    session_id: { type: 'string' },
    message_history: {
      type: 'array',
      items: { type: 'object', properties: { role: { type: 'string' }, content: { type: 'string' } } },
    },
  },
  required: ['user_message', 'session_id'],
};
const OUTPUT_SCHEMA = {
  type: 'object',
  properties: { assistant_message: { type: 'string' } },
  required: ['assistant_message'],
};

/** A CHATBOT spur as PySpur's template builds it: input_node → llm (with memory) → output_node. */
export function chatbotDefinition(model = 'openai/gpt-4o') {
  return {
    spur_type: 'chatbot',
    nodes: [
      n('input_node', 'InputNode', {
        output_schema: { user_message: 'string', session_id: 'string', message_history: 'List[Dict[str, str]]' },
        output_json_schema: JSON.stringify(INPUT_SCHEMA),
      }),
      n('llm', 'SingleLLMCallNode', {
        llm_info: { model, max_tokens: 100, temperature: 0 },
        system_message: 'You are a friendly bot.',
        user_message: '{{input_node.user_message}}',
        enable_message_history: true,
        message_history_variable: 'input_node.message_history',
      }),
      n('output_node', 'OutputNode', {
        output_schema: { assistant_message: 'string' },
        output_json_schema: JSON.stringify(OUTPUT_SCHEMA),
        output_map: { assistant_message: 'llm.output' },
      }),
    ],
    links: [l('input_node', 'llm'), l('llm', 'output_node')],
  };
}

/** The chat turns a provider request carried after its system prompt, as `role: text`. */
export function turnsSent(body: { messages?: { role: string; content: unknown }[] }): string[] {
  return (body.messages ?? [])
    .filter((m) => m.role !== 'system')
    .map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
}
