import type { SpurTemplate } from '../template';
import { link, node, outputs } from './build';

const ASSESS = `amount = float(input_model.request.amount)
limit = 500.0
return {
    "summary": f"{input_model.request.requester} asks for {amount:.2f} for: {input_model.request.purpose}",
    "over_limit": amount > limit,
}`;

export const approvalFlow: SpurTemplate = {
  file_name: 'approval-flow.json',
  name: 'Expense approval with a human pause',
  description: 'Checks an expense request, then waits, durably, for a person to approve or decline it from the inbox.',
  features: ['Human in the loop', 'Durable pause', 'Python'],
  definition: {
    nodes: [
      node('request', 'InputNode', 0, outputs({ requester: 'string', amount: 'number', purpose: 'string' })),
      node('assess', 'PythonFuncNode', 1, { code: ASSESS, ...outputs({ summary: 'string', over_limit: 'boolean' }) }),
      node('approval', 'HumanInterventionNode', 2, {
        message: 'Approve this expense request?',
        block_only_dependent_nodes: true,
      }),
      // A human node hands on what it received (keyed by its predecessor) merged with the reviewer's inputs.
      node('decision', 'OutputNode', 3, {
        ...outputs({ summary: 'string', over_limit: 'boolean' }),
        output_map: { summary: 'approval.assess.summary', over_limit: 'approval.assess.over_limit' },
      }),
    ],
    links: [link('request', 'assess'), link('assess', 'approval'), link('approval', 'decision')],
    test_inputs: [{ id: 1, requester: 'Ada', amount: 740, purpose: 'Conference ticket' }],
    spur_type: 'workflow',
  },
};
