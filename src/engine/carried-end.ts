import type { RegionOutcome } from './pure-region';
import type { GraphNode, KnownRecord, NodeOutput, RunPatch, TaskRecord, TaskWrite } from './run-contract';
import type { RunStatus } from './statuses';
import { TaskBook } from './task-book';
import { type CallAnswer, answerFields, taskWrite } from './task-writes';

/**
 * What a short call needs to write its run's final save itself, when nothing of the run is left
 * after it and its follow-up (RunKeeper.carry): the run then ends in the call's local activity
 * rather than in one of its own, a local activity less per run. Both sides build the save with the
 * same functions (task-writes.ts, TaskBook, finalRunPatch); the workflow builds its own as always
 * and compares digests (finalContentDigest): equal, it sends nothing; different (a bug), it logs
 * the difference and sends its own, which finds the record ended and leaves it as the call wrote it.
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
 * The final save a completed call and its follow-up make of the run, or null when the run does not
 * end with them (a node failed, or one is still to run). The node's write is the graph walker's
 * (task-writes.ts); the outputs are those of the completed tasks, in node order.
 */
export function carriedEndContent(
  end: CarriedEnd,
  node: GraphNode,
  input: Record<string, unknown>,
  answer: CallAnswer & { output: NodeOutput | null },
  followUp: readonly RegionOutcome[],
): FinalContent | null {
  const book = new TaskBook([], {}, end.tasks);
  const writes: TaskWrite[] = [
    taskWrite(
      node.id,
      { status: 'COMPLETED', output: answer.output },
      { inputs: input, ...answerFields(node, answer) },
      () => new Date().toISOString(),
    ),
    ...followUp.map((o) => o.write),
  ];
  for (const write of writes) book.apply(write);
  const tasks = book.take();
  if (tasks.some((t) => t.status !== 'COMPLETED')) return null;
  const byId: Record<string, NodeOutput> = {};
  const byTitle: Record<string, NodeOutput> = {};
  const outputs = new Map(tasks.map((t) => [t.node_id, t.outputs]));
  for (const { id, title } of end.nodes) {
    const output = outputs.get(id);
    if (!output || Object.keys(output).length === 0) continue;
    byId[id] = output;
    byTitle[title] = output;
  }
  return {
    tasks,
    run: finalRunPatch({ status: 'COMPLETED', message: null, outputsByTitle: byTitle, outputsById: byId }),
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
