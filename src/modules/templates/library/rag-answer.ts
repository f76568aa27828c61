import type { SpurTemplate } from '../template';
import { link, llmInfo, node, outputs } from './build';

export const ragAnswer: SpurTemplate = {
  file_name: 'rag-answer.json',
  name: 'Answer questions from your documents',
  description:
    'Retrieval-augmented answers: finds the closest chunks in a vector index, then answers only from them and cites them. Pick your index in the Retriever node.',
  features: ['RAG', 'Vector index', 'LLM'],
  definition: {
    nodes: [
      node('ask', 'InputNode', 0, outputs({ question: 'string' })),
      node('retrieve', 'RetrieverNode', 1, {
        vector_index_id: 'choose-your-index',
        top_k: 4,
        query_template: '{{ask.question}}',
      }),
      node('answer_llm', 'SingleLLMCallNode', 2, {
        llm_info: llmInfo(),
        system_message: 'Answer only from the passages given. If they do not contain the answer, say so.',
        user_message:
          'Question: {{ask.question}}\n\nPassages:\n{% for r in retrieve.results %}[{{loop.index}}] {{r.text}}\n{% endfor %}',
        ...outputs({ answer: 'string' }),
      }),
      node('reply', 'OutputNode', 3, { ...outputs({ answer: 'string' }), output_map: { answer: 'answer_llm.answer' } }),
    ],
    links: [
      link('ask', 'retrieve'),
      link('retrieve', 'answer_llm'),
      link('ask', 'answer_llm'),
      link('answer_llm', 'reply'),
    ],
    test_inputs: [{ id: 1, question: 'What does the handbook say about remote work?' }],
    spur_type: 'workflow',
  },
};
