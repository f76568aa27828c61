import type { SpurTemplate } from '../template';
import { link, llmInfo, node, outputs } from './build';

const CALCULATOR = `import ast, operator
ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
def ev(n):
    if isinstance(n, ast.Constant): return n.value
    if isinstance(n, ast.BinOp): return ops[type(n.op)](ev(n.left), ev(n.right))
    raise ValueError("only + - * / on numbers")
return {"result": ev(ast.parse(input_model.expression, mode="eval").body)}`;

export const agentTools: SpurTemplate = {
  file_name: 'agent-tools.json',
  name: 'Agent with tools',
  description:
    'An LLM agent that decides when to call its tools (a calculator written in Python and a clock) and answers with their results.',
  features: ['Agent', 'Tool calling', 'Python'],
  definition: {
    nodes: [
      node('task', 'InputNode', 0, outputs({ question: 'string' })),
      node('agent', 'AgentNode', 1, {
        llm_info: llmInfo(),
        system_message:
          'You answer questions. Use the calculator for arithmetic and the clock for the date; never guess.',
        user_message: '{{task.question}}',
        max_iterations: 6,
        ...outputs({ output: 'string' }),
      }),
      node(
        'calculator',
        'PythonFuncNode',
        0,
        { code: CALCULATOR, ...outputs({ result: 'number' }) },
        { parent_id: 'agent', coordinates: { x: 40, y: 80 } },
      ),
      node(
        'clock',
        'PythonFuncNode',
        0,
        {
          code: 'import datetime\nreturn {"now": datetime.datetime.now(datetime.timezone.utc).isoformat()}',
          ...outputs({ now: 'string' }),
        },
        { parent_id: 'agent', coordinates: { x: 40, y: 220 } },
      ),
      node('answer', 'OutputNode', 2, { ...outputs({ answer: 'string' }), output_map: { answer: 'agent.output' } }),
    ],
    links: [link('task', 'agent'), link('agent', 'answer')],
    test_inputs: [{ id: 1, question: 'What is 17 * 23, and what day is it?' }],
    spur_type: 'workflow',
  },
};
