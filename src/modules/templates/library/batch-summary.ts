import type { SpurTemplate } from '../template';
import { link, llmInfo, node, outputs } from './build';

export const batchSummary: SpurTemplate = {
  file_name: 'batch-summary.json',
  name: 'Summarise every row of a dataset',
  description:
    'One LLM call per row: upload a CSV with a `text` column and start a batch run; each row is its own durable run and the results land in an output file.',
  features: ['Batch runs', 'Datasets', 'LLM'],
  definition: {
    nodes: [
      node('row', 'InputNode', 0, outputs({ text: 'string' })),
      node('summarise', 'SingleLLMCallNode', 1, {
        llm_info: llmInfo(300),
        system_message: 'You write one-sentence summaries that keep every number and name.',
        user_message: 'Summarise:\n{{row.text}}',
        ...outputs({ summary: 'string' }),
      }),
      node('result', 'OutputNode', 2, {
        ...outputs({ summary: 'string' }),
        output_map: { summary: 'summarise.summary' },
      }),
    ],
    links: [link('row', 'summarise'), link('summarise', 'result')],
    test_inputs: [{ id: 1, text: 'Temporal keeps the state of every run, so a crash of a worker loses nothing.' }],
    spur_type: 'workflow',
  },
};
