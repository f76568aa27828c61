import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { coerceToOutputSchema } from '../output-coercion.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { NodeExecutionError } from '../errors.js';

const DEFAULT_CODE = [
  '# Write your Python code here.',
  '# The input data is available as "input" pydantic model.',
  '# Return a dictionary of variables that you would like to see in the node output.',
].join('\n');

const config = extendConfig({
  /** Body of `def user_function(input_model):`, returning a dict shaped like `output_schema`. */
  code: z.string().default(DEFAULT_CODE),
  /** Wall-clock limit; the CPU-time limit is one second more. Not in PySpur, which ran code in-process. */
  timeout_seconds: z.number().int().min(1).max(3600).default(30),
  /** Address-space cap of each Python process, at most the installation's SPUR_PYTHON_MAX_MEMORY_MB. */
  memory_limit_mb: z.number().int().min(64).max(8192).default(512),
});

export const pythonFuncNode: NodeTypeDefinition<typeof config> = {
  name: 'PythonFuncNode',
  displayName: 'Python Function',
  description: 'Runs a Python function over its input; the arguments are its input, and its result comes back as JSON.',
  category: 'Code Execution',
  visualTag: { acronym: 'PFN', color: '#6610F2' },
  config,
  input: openObject(),
  output: openObject(),
  async execute(cfg, input, ctx) {
    const sandbox = ctx.pythonSandbox;
    if (!sandbox)
      throw new NodeExecutionError('This process has no Python sandbox configured; Python nodes run on workers');
    const maxMb = sandbox.settings.maxMemoryMb;
    const memoryLimitMb = Math.min(cfg.memory_limit_mb, maxMb);
    try {
      const output = await sandbox.run({
        code: cfg.code,
        input,
        timeoutSeconds: cfg.timeout_seconds,
        memoryLimitMb,
        signal: ctx.signal,
        heartbeat: () => ctx.heartbeat(),
        // Room for a value at the run's limit in JSON (escapes included); the engine checks the limit itself.
        ...(ctx.maxValueBytes !== undefined ? { outputLimitBytes: 2 * ctx.maxValueBytes + 1024 * 1024 } : {}),
      });
      return coerceToOutputSchema(output, cfg.output_schema);
    } catch (error) {
      // Say why the limit is lower than the node asked for.
      if (
        error instanceof NodeExecutionError &&
        memoryLimitMb < cfg.memory_limit_mb &&
        /memory limit/.test(error.message)
      ) {
        throw new NodeExecutionError(
          `${error.message} (the node asks for ${cfg.memory_limit_mb} MB; this installation allows at most ${maxMb} MB: SPUR_PYTHON_MAX_MEMORY_MB)`,
        );
      }
      throw error;
    }
  },
};
