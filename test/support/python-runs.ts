import { randomBytes } from 'node:crypto';
import { pollDelays } from './poll';
import { readFileSync, readdirSync } from 'node:fs';
import { waitForRun } from './engine';
import { l, n } from './graphs';

export { processEnded } from './host-process';
import type { client } from './http';

type Http = ReturnType<typeof client>;
export interface PyTask {
  node_id: string;
  status: string;
  error?: string;
  outputs?: Record<string, unknown>;
}
export interface PyRun {
  id: string;
  status: string;
  tasks: PyTask[];
}

/** A workflow of one PythonFuncNode `py` after an InputNode. */
export async function pythonWorkflow(http: Http, code: string, config: Record<string, unknown> = {}): Promise<string> {
  const definition = {
    nodes: [
      n('src', 'InputNode', { output_schema: { x: 'string' } }),
      n('py', 'PythonFuncNode', { code, output_schema: {}, ...config }),
    ],
    links: [l('src', 'py')],
  };
  const res = await http.post('/wf/', { name: `py-${Math.random()}`, definition });
  if (res.status !== 200) throw new Error(`workflow not created: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** Runs `code` to its end (blocking run) and returns the node's task. */
export async function runPython(http: Http, code: string, config: Record<string, unknown> = {}): Promise<PyTask> {
  const id = await pythonWorkflow(http, code, config);
  const started = (await http.post(`/wf/${id}/start_run/`, { initial_inputs: { src: { x: 'x' } } })).body as PyRun;
  const run = (await waitForRun(http, started.id, undefined, 120_000)) as PyRun;
  const task = run.tasks.find((t) => t.node_id === 'py');
  if (!task) throw new Error(`run ${run.id} has no py task: ${JSON.stringify(run)}`);
  return task;
}

/** Starts `code` and returns the run id without waiting. */
export async function startPython(http: Http, code: string, config: Record<string, unknown> = {}): Promise<string> {
  const id = await pythonWorkflow(http, code, config);
  return ((await http.post(`/wf/${id}/start_run/`, { initial_inputs: { src: { x: 'x' } } })).body as PyRun).id;
}

/** Host pids whose command line contains `token` (seen from outside any sandbox). */
export function pidsWith(token: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(token)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Polls `probe` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  const pause = pollDelays();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await pause();
  }
}

/**
 * Python lines that wait `seconds` in a child process carrying `token` on its command line (user
 * code reaches the sandbox on stdin, so nothing else names it): the host finds the node's own
 * process as that child's parent, sandbox or not.
 */
export function tokenedWait(token: string, seconds: number): string {
  return `import subprocess, sys\nsubprocess.run([sys.executable, "-c", "import time; time.sleep(${seconds})", ${JSON.stringify(token)}])`;
}

/** The parent pid of a live process. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which sits in parentheses and may hold spaces.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The child of `ancestor` on the way down to `pid` (throws when `pid` does not descend from it). */
export function childOnTheWay(ancestor: number, pid: number): number {
  let current = pid;
  while (parentOf(current) !== ancestor) {
    current = parentOf(current);
    if (current <= 1) throw new Error(`${pid} does not descend from ${ancestor}`);
  }
  return current;
}

/**
 * Fresh tokens for tokenedWait, and the end of every process still carrying one: a node's process
 * that outlived its test must not outlive the suite (call `killAll` in `after`).
 */
export function processTokens(prefix: string): { next(): string; killAll(): void } {
  const tokens: string[] = [];
  return {
    next() {
      const token = `${prefix}-${randomBytes(6).toString('hex')}`;
      tokens.push(token);
      return token;
    },
    killAll() {
      for (const pid of tokens.flatMap(pidsWith)) process.kill(pid, 'SIGKILL');
    },
  };
}
