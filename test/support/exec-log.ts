import { pollDelays } from './poll';
import { readFileSync } from 'node:fs';
import { n } from './graphs';

/**
 * Settings for suites whose Python nodes are the test's instrument: they write to a log file on the
 * host, which the sandbox forbids, so these workers run Python unsandboxed (trusted code: the
 * test's own). What the sandbox keeps out is tested in python-sandbox-*.test.ts.
 */
export const HOST_WRITING_PYTHON = { SPUR_PYTHON_SANDBOX: 'off' } as const;

/**
 * A PythonFuncNode that appends `<worker pid> <tag> <node id> start|end` to a log file around a
 * sleep, and returns `{"<key>": <value of the input field>-<node id>}`. The worker spawns python
 * directly, so the parent pid names the worker process that executed the node. The node needs `src`
 * (an InputNode with `tag` and `log`) among its predecessors.
 */
export function loggedSleep(id: string, seconds: number, from: { node: string; field: string }, key: string) {
  const value = `input_model.${from.node}.${from.field}`;
  const code = [
    'import os, time',
    `line = str(os.getppid()) + " " + input_model.src.tag + " ${id} "`,
    'open(input_model.src.log, "a").write(line + "start\\n")',
    `time.sleep(${seconds})`,
    'open(input_model.src.log, "a").write(line + "end\\n")',
    `return {"${key}": ${value} + "-${id}"}`,
  ].join('\n');
  return n(id, 'PythonFuncNode', {
    code,
    timeout_seconds: 60,
    heartbeat_timeout_seconds: 10,
    output_schema: { [key]: 'string' },
  });
}

export interface ExecEvent {
  pid: number;
  tag: string;
  node: string;
  phase: 'start' | 'end';
}

export function readExecLog(file: string): ExecEvent[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [pid, tag, node, phase] = line.split(' ');
      return { pid: Number(pid), tag: tag ?? '', node: node ?? '', phase: phase === 'end' ? 'end' : 'start' };
    });
}

/** Polls `predicate` until it holds; fails with `what` after `timeoutMs` (generous: shared machine). */
export async function until(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pause = pollDelays();
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause();
  }
}
