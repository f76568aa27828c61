/** Terse builders for run definitions in e2e tests. */
export type Cfg = Record<string, unknown>;

export function n(id: string, nodeType: string, config: Cfg = {}, extra: Cfg = {}) {
  return { id, title: id, node_type: nodeType, config, ...extra };
}

export function l(source: string, target: string, sourceHandle: string | null = null) {
  return { source_id: source, target_id: target, source_handle: sourceHandle, target_handle: null };
}

export const input = (id = 'in') => n(id, 'InputNode', { output_schema: { x: 'string' } });

/** in(x) → ask (one call of `model`: "say {{in.x}}") → out(answer). */
export const oneLlmCall = (model: string) => ({
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
});

/** in → gate (a human pause, "Approve me") → out. */
export const gatedByHuman = {
  nodes: [input(), n('gate', 'HumanInterventionNode', { message: 'Approve me' }), n('out', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'out')],
};

/** src(x) → py (a regular activity: y = x + "!") → out(result = py.y). */
export const pythonExclaim = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string' } }),
    n('py', 'PythonFuncNode', { code: 'return {"y": input_model.src.x + "!"}', output_schema: { y: 'string' } }),
    n('out', 'OutputNode', { output_map: { result: 'py.y' } }),
  ],
  links: [l('src', 'py'), l('py', 'out')],
};

/** A router condition, PySpur's shape. */
export function cond(variable: string, operator: string, value: unknown, logicalOperator = 'AND') {
  return { variable, operator, value, logicalOperator };
}
