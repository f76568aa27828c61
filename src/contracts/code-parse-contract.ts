// The contract of `spurCodeParse`: workflow code (PySpur's WorkflowBuilder style) run in a worker's
// Python sandbox, answering the graph it builds. The code travels in the workflow's input, so its
// size is bounded here, and so is everything the sandbox may answer.

/** The limits of one parse: the api refuses larger code (413); the rest bound the sandbox. */
export const CODE_PARSE_LIMITS = {
  /** Most bytes of code (UTF-8) the api accepts. */
  maxCodeBytes: 256 * 1024,
  /** Wall-clock time of the code (the CPU-time limit is one second more). */
  timeoutSeconds: 10,
  /** Address-space cap of the Python process (never above the installation's SPUR_PYTHON_MAX_MEMORY_MB). */
  memoryMb: 256,
  /** Everything the code writes (its prints and the definition it builds), well inside a Temporal payload. */
  outputBytes: 1024 * 1024,
} as const;

export interface CodeParseInput {
  code: string;
}

/** What the sandbox answered: the user's output, validated by the api before anything uses it. */
export type CodeParseOutput = Record<string, unknown>;

export const codeParseWorkflowId = (prefix: string, unique: string) => `${prefix}code-parse-${unique}`;
