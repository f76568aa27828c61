import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const DEFAULT_CODE = [
  '# Write your Python code here.',
  '# The input data is available as "input" pydantic model.',
  '# Return a dictionary of variables that you would like to see in the node output.',
].join('\n');

const config = extendConfig({
  /** Body of `def user_function(input_model):`, returning a dict shaped like `output_schema`. */
  code: z.string().default(DEFAULT_CODE),
});

export const pythonFuncNode: NodeTypeDefinition<typeof config> = {
  name: 'PythonFuncNode',
  displayName: 'Python Function',
  category: 'Code Execution',
  visualTag: { acronym: 'PFN', color: '#6610F2' },
  config,
  input: openObject(),
  output: openObject(),
  executionKind: 'io',
};
