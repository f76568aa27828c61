// The benchmarked workflows. Each echoes its input `{ text }` through a linear chain, so a
// response can be checked cheaply: the last node's output must equal the input.

export interface BenchNode {
  id: string;
  title: string;
  node_type: string;
  config: Record<string, unknown>;
  parent_id: null;
}

export interface BenchLink {
  source_id: string;
  target_id: string;
  source_handle: null;
  target_handle: null;
}

export interface Scenario {
  key: string;
  label: string;
  nodes: BenchNode[];
  links: BenchLink[];
  /** The node whose output must echo the input. */
  lastNodeId: string;
  /** What that node's `text` must be for an input `text` (the input itself unless said). */
  expected?: (text: string) => string;
}

const node = (id: string, nodeType: string, config: Record<string, unknown> = {}): BenchNode => ({
  id,
  title: id,
  node_type: nodeType,
  config,
  parent_id: null,
});

function chain(key: string, label: string, nodes: BenchNode[], expected?: Scenario['expected']): Scenario {
  const links = nodes.slice(1).map((n, i): BenchLink => ({
    source_id: (nodes[i] as BenchNode).id,
    target_id: n.id,
    source_handle: null,
    target_handle: null,
  }));
  return { key, label, nodes, links, lastNodeId: (nodes[nodes.length - 1] as BenchNode).id, expected };
}

const input = () => node('in', 'InputNode', { output_schema: { text: 'string' } });
const pick = () => node('pick', 'OutputNode', { output_map: { text: 'in.text' } });
const out = (from: string) => node('out', 'OutputNode', { output_map: { text: `${from}.text` } });

/** Input → one SingleLLMCallNode (`extra` added to its config) → Output. */
function llmCall(key: string, label: string, extra: Record<string, unknown> = {}): Scenario {
  return chain(
    key,
    label,
    [
      input(),
      node('llm', 'SingleLLMCallNode', {
        llm_info: { model: 'openai/gpt-4o', max_tokens: 50, temperature: 0 },
        user_message: '{{in.text}}',
        output_schema: { output: 'string' },
        ...extra,
      }),
      node('out', 'OutputNode', { output_map: { text: 'llm.output' } }),
    ],
    (text) => `echo: ${text}`,
  );
}

export const ECHO_CODE = 'return {"text": input_model.pick.text}';

export const SCENARIOS = {
  /** The reference for per-node overhead: just the InputNode (no activity at all). */
  one: chain('one', '1-node (Input)', [input()]),
  /** A: Input → Output(pick) → Merge → Output(reshape) → Output, all pure (local activities). */
  pure: chain('pure', 'A: 5-node pure', [
    input(),
    pick(),
    node('merge', 'MergeNode'),
    node('reshape', 'OutputNode', { output_map: { text: 'merge.pick.text' } }),
    out('reshape'),
  ]),
  /** B: as A with the Merge replaced by a PythonFuncNode (a regular activity + a python3 process). */
  python: chain('python', 'B: 5-node with PythonFunc', [
    input(),
    pick(),
    node('py', 'PythonFuncNode', { code: ECHO_CODE, output_schema: { text: 'string' } }),
    node('reshape', 'OutputNode', { output_map: { text: 'py.text' } }),
    out('reshape'),
  ]),
  /**
   * C: Input → one LLM call → Output: I/O-bound. The provider is the benches' local fake (OpenAI's
   * protocol, its base URL set as OPENAI_API_BASE), which echoes the prompt after the delay it is given.
   */
  llm: llmCall('llm', 'C: LLM call'),
  /** C with a timeout of 30 s: a short call, which runs as a local activity (activity-options.ts). */
  llmShort: llmCall('llm-short', 'C: short LLM call', { timeout_seconds: 30 }),
} satisfies Record<string, Scenario>;

export type ScenarioKey = keyof typeof SCENARIOS;

export function runBody(text: string): { initial_inputs: Record<string, Record<string, unknown>> } {
  return { initial_inputs: { in: { text } } };
}

/** True when a blocking run's response (outputs by node id) echoes `text` at the last node. */
export function echoes(scenario: Scenario, body: unknown, text: string): boolean {
  if (!body || typeof body !== 'object') return false;
  const last = (body as Record<string, unknown>)[scenario.lastNodeId];
  const want = scenario.expected ? scenario.expected(text) : text;
  return !!last && typeof last === 'object' && (last as Record<string, unknown>).text === want;
}
