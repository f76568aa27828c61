import type { GraphNode, NodeOutput, TaskRecord, TaskWrite } from './run-contract';
import type { TaskStatus } from './statuses';

const OPEN: TaskStatus[] = ['PENDING', 'RUNNING', 'PAUSED'];

/**
 * The run's tasks, kept in the workflow and saved whole when something worth showing changed.
 * One document per run (not one per task) because FerretDB v1 scans for anything but an `_id`
 * lookup and an update costs ~10× an insert: a run's progress costs one write, not one per node.
 */
export class TaskBook {
  private readonly records = new Map<string, TaskRecord>();
  private changed = false;
  /** Whether the document exists yet: the first save is an insert. */
  saved = false;

  constructor(nodes: GraphNode[], taskIds: Record<string, string>, restored?: TaskRecord[]) {
    if (restored) {
      for (const record of restored) this.records.set(record.node_id, { ...record });
      return;
    }
    nodes.forEach((node, index) => {
      this.records.set(node.id, {
        id: taskIds[node.id] ?? `T${index + 1}`,
        node_id: node.id,
        status: 'PENDING',
        inputs: null,
        outputs: null,
        error: null,
        start_time: null,
        end_time: null,
        subworkflow_output: null,
      });
    });
  }

  get dirty(): boolean {
    return this.changed;
  }

  apply(write: TaskWrite): void {
    const record = this.records.get(write.nodeId);
    if (!record) return; // loop children have no task (PySpur)
    record.status = write.status;
    if (write.inputs !== undefined) record.inputs = write.inputs;
    if (write.outputs !== undefined) record.outputs = write.outputs;
    if (write.error !== undefined) record.error = write.error;
    if (write.startTime !== undefined) record.start_time = write.startTime;
    if (write.endTime !== undefined) record.end_time = write.endTime;
    if (write.subworkflowOutput !== undefined) record.subworkflow_output = write.subworkflowOutput;
    if (write.usage !== undefined) record.usage = write.usage;
    if (write.waitingFor !== undefined) record.waiting_for = write.waitingFor;
    if (write.waitingReason !== undefined) record.waiting_reason = write.waitingReason;
    if (write.waitingUntil !== undefined) record.waiting_until = write.waitingUntil;
    if (write.addWaitedMs !== undefined) record.waited_ms = (record.waited_ms ?? 0) + write.addWaitedMs;
    if (write.model !== undefined) record.model = write.model;
    if (write.modelFailures !== undefined) record.model_failures = write.modelFailures;
    if (write.dryRun !== undefined) record.dry_run = write.dryRun;
    this.changed = true;
  }

  /** A rerun's reused tasks, shown as the original run recorded them (the ids stay this run's). */
  adopt(records: readonly TaskRecord[]): void {
    for (const record of records) {
      const mine = this.records.get(record.node_id);
      if (!mine) continue;
      this.records.set(record.node_id, { ...record, id: mine.id });
      this.changed = true;
    }
  }

  /** Cancel: every task still open becomes CANCELED. */
  cancelOpen(at: string): void {
    for (const record of this.records.values()) {
      if (OPEN.includes(record.status))
        this.apply({
          nodeId: record.node_id,
          status: 'CANCELED',
          endTime: record.end_time ?? at,
          waitingFor: null,
          waitingReason: null,
          ...(record.waiting_until ? { waitingUntil: null } : {}),
        });
    }
  }

  /** The tasks to save (definition order), clearing the dirty mark. */
  take(): TaskRecord[] {
    this.changed = false;
    return this.snapshot();
  }

  /** A copy of every task, dirty mark untouched (carried into a continued run). */
  snapshot(): TaskRecord[] {
    return [...this.records.values()].map((r) => ({ ...r }));
  }
}

/**
 * The outputs of a run's tasks that ended with one, by node id: what a blocking run answers with
 * when it paused or was cancelled, and a batch row's output line. Empty outputs are left out, as
 * the engine leaves them out of a run's outputs.
 */
export function taskOutputsById(
  tasks: readonly TaskRecord[],
  statuses: readonly TaskStatus[] = ['COMPLETED'],
): Record<string, NodeOutput> {
  const outputs: Record<string, NodeOutput> = {};
  for (const t of tasks)
    if (statuses.includes(t.status) && t.outputs && Object.keys(t.outputs).length > 0) outputs[t.node_id] = t.outputs;
  return outputs;
}
