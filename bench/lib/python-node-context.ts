import { loadConfig } from '../../src/config/load-config';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import type { NodeExecutionContext } from '../../src/nodes/types';
import { createOutboundFetch } from '../../src/outbound/outbound-fetch';

// Built once: the context is made inside the timed loop, and a bench must time the node, not config parsing.
const fetch = createOutboundFetch(loadConfig(process.env).outbound);

/** What a worker's activity hands a PythonFuncNode, for benches that execute the node in process. */
export function pythonNodeContext(sandbox: PythonSandbox): NodeExecutionContext {
  return {
    runId: 'bench',
    nodeId: 'py',
    nodeTitle: 'py',
    signal: new AbortController().signal,
    secret: async () => undefined,
    fetch,
    heartbeat: () => undefined,
    pythonSandbox: sandbox,
  };
}
