// A stand-in worker for one test: runs a PythonFuncNode unsandboxed (SPUR_PYTHON_SANDBOX=off) whose
// code writes its pid to the file named in argv[2] and sleeps, so the test can kill this process
// with SIGKILL and see whether the Python process outlives it. Never ends on its own.
import { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { pythonFuncNode } from '../../src/nodes/code-execution/python-func-node';
import { devOutboundFetch } from './outbound';

const pidFile = process.argv[2] ?? '';
const sandbox = new PythonSandbox({
  sandbox: 'off',
  interpreter: undefined,
  network: 'none',
  maxMemoryMb: 256,
  maxProcesses: 64,
  scratchMb: 64,
  maxConcurrent: 1,
  cgroup: 'off',
  privateDirs: [],
});
const config = pythonFuncNode.config.parse({
  code: 'import os, time\nopen(input_model.pid_file, "w").write(str(os.getpid()))\ntime.sleep(60)\nreturn {}',
  output_schema: {},
  timeout_seconds: 120,
});
void pythonFuncNode.execute?.(
  config,
  { pid_file: pidFile },
  {
    runId: 'run-1',
    nodeId: 'node-1',
    nodeTitle: 'Python_1',
    signal: new AbortController().signal,
    secret: async () => undefined,
    fetch: devOutboundFetch,
    heartbeat: () => undefined,
    pythonSandbox: sandbox,
  },
);
