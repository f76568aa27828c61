import type { WorkflowDefinition, WorkflowNode } from '../../definitions/definition.schema';

/** InputNode config defaults, byte for byte as PySpur writes them (the JSON text has its spaces). */
const INPUT_NODE_CONFIG = {
  output_schema: { input_1: 'string' },
  output_json_schema: '{"type": "object", "properties": {"input_1": {"type": "string"} } }',
  has_fixed_output: false,
  enforce_schema: false,
};

function node(id: string, nodeType: string, x: number, config: Record<string, unknown>): WorkflowNode {
  return {
    id,
    title: id,
    parent_id: null,
    node_type: nodeType,
    config,
    coordinates: { x, y: 100 },
    dimensions: null,
    subworkflow: null,
  };
}

/** What create (without a definition) and reset write: a single input node. */
export function defaultWorkflowDefinition(): WorkflowDefinition {
  return {
    nodes: [node('input_node', 'InputNode', 100, { ...INPUT_NODE_CONFIG })],
    links: [],
    test_inputs: [],
    spur_type: 'workflow',
  };
}

const CHAT_INPUT_JSON_SCHEMA = {
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

const CHAT_OUTPUT_JSON_SCHEMA = {
  type: 'object',
  properties: { assistant_message: { type: 'string' } },
  required: ['assistant_message'],
};

/** A chatbot needs `user_message`/`session_id` in and `assistant_message` out. */
export function defaultChatbotDefinition(): WorkflowDefinition {
  return {
    nodes: [
      node('input_node', 'InputNode', 100, {
        ...INPUT_NODE_CONFIG,
        output_schema: { user_message: 'string', session_id: 'string', message_history: 'List[Dict[str, str]]' },
        output_json_schema: JSON.stringify(CHAT_INPUT_JSON_SCHEMA),
      }),
      node('output_node', 'OutputNode', 300, {
        output_schema: { assistant_message: 'string' },
        output_json_schema: JSON.stringify(CHAT_OUTPUT_JSON_SCHEMA),
      }),
    ],
    links: [],
    test_inputs: [],
    spur_type: 'chatbot',
  };
}
