/** Definitions used across API tests, written as a PySpur client would send them. */
export function inputNode(id = 'input_node', extra: Record<string, unknown> = {}) {
  return { id, title: id, node_type: 'InputNode', config: { output_schema: { question: 'string' } }, ...extra };
}

export function outputNode(id = 'output_node', extra: Record<string, unknown> = {}) {
  return {
    id,
    title: id,
    node_type: 'OutputNode',
    config: { output_schema: { answer: 'string' }, output_map: {} },
    ...extra,
  };
}

export function linearDefinition() {
  return {
    nodes: [inputNode(), outputNode()],
    links: [{ source_id: 'input_node', target_id: 'output_node' }],
    test_inputs: [],
    spur_type: 'workflow',
  };
}

export function chatbotIo(inputProps: Record<string, unknown>, outputProps: Record<string, unknown>) {
  return {
    nodes: [
      {
        id: 'in',
        node_type: 'InputNode',
        config: { output_json_schema: JSON.stringify({ type: 'object', properties: inputProps }) },
      },
      {
        id: 'out',
        node_type: 'OutputNode',
        config: { output_json_schema: JSON.stringify({ type: 'object', properties: outputProps }) },
      },
    ],
    links: [{ source_id: 'in', target_id: 'out' }],
    spur_type: 'chatbot',
  };
}
