import assert from 'node:assert/strict';
import { batchProviderOf, providerBatchRefusal } from '../../src/engine/provider-batch-plan';
import type { GraphNode } from '../../src/engine/run-contract';

const node = (id: string, node_type: string, config: Record<string, unknown> = {}): GraphNode => ({
  id,
  title: id,
  parent_id: null,
  node_type,
  config,
});
const llm = (model: string) => node('ask', 'SingleLLMCallNode', { llm_info: { model } });

describe('provider batch plan: which graphs provider batch mode runs', () => {
  // The node types docs/batch-mode.md says it refuses, and why.
  const refused: Array<[string, RegExp]> = [
    ['AgentNode', /an agent/],
    ['MCPToolNode', /a tool/],
    ['HumanInterventionNode', /a human pause/],
    ['ForLoopNode', /a loop/],
    ['SubworkflowNode', /a sub-workflow/],
    ['WaitNode', /a wait/],
    ['WaitForCallbackNode', /a wait for a callback/],
  ];
  for (const [type, why] of refused)
    it(`refuses a ${type}, naming it`, () => {
      const message = providerBatchRefusal([node('in', 'InputNode'), node('x1', type), llm('openai/gpt-4o-mini')]);
      assert.match(message ?? '', new RegExp(`'x1' \\(x1\\) is ${why.source}`));
    });

  it('runs OpenAI and Anthropic calls among other nodes; refuses a call to another provider, naming its model', () => {
    const ok = [
      node('in', 'InputNode'),
      node('py', 'PythonFuncNode'),
      node('r', 'RouterNode'),
      llm('anthropic/claude-3-5-haiku-latest'),
    ];
    assert.equal(providerBatchRefusal(ok), null);
    assert.match(providerBatchRefusal([llm('gemini/gemini-2.0-flash')]) ?? '', /calls gemini\/gemini-2\.0-flash/);
    assert.match(providerBatchRefusal([node('ask', 'SingleLLMCallNode', {})]) ?? '', /calls no model/);
  });

  it('a provider is the model id’s prefix, exactly', () => {
    assert.equal(batchProviderOf('openai/gpt-4o'), 'openai');
    assert.equal(batchProviderOf('anthropic/claude-3-opus-latest'), 'anthropic');
    assert.equal(batchProviderOf('openaix/gpt-4o'), undefined);
    assert.equal(batchProviderOf('gpt-4o'), undefined);
  });
});
