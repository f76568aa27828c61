import type { GraphNode, KnownRecord, NodeOutput, RunPatch, TaskRecord, TaskWrite } from './run-contract';
import { collectOutputs } from './graph-walker';
import type { NodeState } from './node-inputs';
import type { RunStatus } from './statuses';
import { TaskBook } from './task-book';

/**
 * What a run's last step needs to write the run's final save itself: a short call when nothing of
 * the run is left after it and its follow-up (RunKeeper.carry), or a pure region that is all that
 * is left. The run then ends in that step's local activity rather than in one of its own, a local
 * activity less per run. Both sides build the save with the same functions (task-writes.ts,
 * TaskBook, collectOutputs, finalRunPatch); the workflow builds its own as always and compares
 * digests (finalContentDigest): equal, it sends nothing; different (a bug), it logs the difference
 * and sends its own, which finds the record ended and leaves it as the call wrote it.
 */
export interface CarriedEnd {
  /** Every top-level task as the run's workflow holds them before the call answers. */
  tasks: TaskRecord[];
  /** The top-level nodes in order: the run's outputs are theirs (collectOutputs). */
  nodes: Array<Pick<GraphNode, 'id' | 'title'>>;
  /** What the final save may write on without reading the run, when the call's own save does not say. */
  known?: KnownRecord;
}

/** The run's final save as its workflow would write it: every task, and the run's end. */
export interface FinalContent {
  tasks: TaskRecord[];
  run: RunPatch;
}

/** The run's patch at its end (RunKeeper's final save, and a carried end's). */
export function finalRunPatch(final: {
  status: RunStatus;
  message: string | null;
  outputsByTitle: Record<string, NodeOutput> | null;
  outputsById?: Record<string, NodeOutput>;
}): RunPatch {
  return {
    status: final.status,
    message: final.message,
    final: {
      outputsByTitle: final.outputsByTitle,
      ...(final.outputsById ? { outputsById: final.outputsById } : {}),
    },
  };
}

/**
 * The final save the writes of a run's last step (a call and its follow-up, or a pure region) make
 * of it, or null when the run does not end with them: a task failed, or one is still open. The run
 * then ends COMPLETED, as its workflow ends a run where nothing failed (an untaken route's tasks are
 * CANCELED); its outputs are those of the completed tasks, in node order (collectOutputs).
 */
export function carriedEndContent(end: CarriedEnd, writes: readonly TaskWrite[]): FinalContent | null {
  const book = new TaskBook([], {}, end.tasks);
  for (const write of writes) book.apply(write);
  const tasks = book.take();
  if (tasks.some((t) => t.status !== 'COMPLETED' && t.status !== 'CANCELED')) return null;
  const completed = new Map<string, NodeState>(
    tasks.flatMap((t) => (t.status === 'COMPLETED' ? [[t.node_id, { status: 'COMPLETED', output: t.outputs }]] : [])),
  );
  const outputs = collectOutputs(end, completed);
  return {
    tasks,
    run: finalRunPatch({
      status: 'COMPLETED',
      message: null,
      outputsByTitle: outputs.byTitle,
      outputsById: outputs.byId,
    }),
  };
}

/** A short fingerprint of a final save's content (two FNV-1a hashes of its JSON): equal content, equal digest. */
export function finalContentDigest(content: FinalContent): string {
  const text = JSON.stringify({ tasks: content.tasks, run: content.run });
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return `${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}
