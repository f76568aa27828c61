import { fromJsonText } from '../db/json-text';
import type { Models, RunDoc, ScheduleDoc, WorkflowDoc, WorkflowVersionDoc } from '../db/models';
import type { RunRepository } from '../db/runs/run-repository';
import { createScheduleFires } from '../db/schedule-fires';
import { createScheduleSkips } from '../db/schedule-skips';
import { WorkflowPausedError } from '../db/workflow-pauses';
import type { WorkflowVersions } from '../db/workflow-versions';
import type { DefinitionLimits } from '../config/settings';
import { SpurError } from '../errors';
import { checkWithinLimits, resolveRunInputs, storedRunDefinition } from './inputs';
import type { KnownAtLaunch } from './launcher';
import type { RunRecorder } from './recorder';

export interface ScheduledRunDeps {
  models: Models;
  recorder: RunRecorder;
  runRecords: Pick<RunRepository, 'recordOfTrigger'>;
  versions: Pick<WorkflowVersions, 'ensureVersion' | 'byId'>;
  definitionLimits: DefinitionLimits;
}

export type ScheduledRecord =
  /** The run is recorded (PENDING unless its inputs no longer fit: then FAILED, saying why). */
  | { kind: 'recorded'; run: RunDoc; known?: KnownAtLaunch }
  /** The schedule (being deleted), its workflow or its pinned version is gone: nothing to record. */
  | { kind: 'gone'; reason: string }
  /** Its workflow is paused: no run, and the skip is recorded with the schedule (db/schedule-skips.ts). */
  | { kind: 'skipped'; reason: string };

/** What a scheduled run's record says, when a schedule's inputs no longer fit its workflow. */
export const inputsNoLongerFit = (reason: string) => `The schedule's inputs no longer fit the workflow: ${reason}`;

/**
 * Records the run of one fire of a schedule (the one recorder, as a client's run): its version
 * (`latest`: the workflow as it is now; `pinned`: the one saved with the schedule), its inputs
 * checked against it. A fire is recorded once: `key` names it (the fire's Temporal workflow id),
 * so a recording retried after a crash finds the run it made. Inputs that no longer fit (the
 * workflow changed) leave a FAILED run saying why, and the schedule keeps its times. The schedule is
 * read inside a fire recording (db/schedule-fires.ts), so a fire never records a run after the
 * schedule's delete (or its workflow's) has answered.
 */
export function createScheduledRunRecorder(deps: ScheduledRunDeps) {
  const { models } = deps;
  const fires = createScheduleFires(models);
  const skips = createScheduleSkips(models);

  async function versionOf(schedule: ScheduleDoc): Promise<WorkflowVersionDoc | null> {
    if (schedule.version === 'pinned')
      return schedule.pinned_version_id ? deps.versions.byId(schedule.pinned_version_id) : null;
    const workflow = await models.Workflow.findById(schedule.workflow_id).lean<WorkflowDoc>();
    return workflow ? deps.versions.ensureVersion(workflow) : null;
  }

  async function record(
    schedule: ScheduleDoc,
    scheduledTime: Date,
    key: string,
    assertInTime: () => void,
  ): Promise<ScheduledRecord> {
    const version = await versionOf(schedule);
    if (!version) return { kind: 'gone', reason: `workflow ${schedule.workflow_id} or its pinned version is gone` };
    const definition = storedRunDefinition(version.definition);
    const inputs = fromJsonText<Record<string, Record<string, unknown>>>(schedule.initial_inputs) ?? {};
    let problem: string | null = null;
    try {
      checkWithinLimits(definition, deps.definitionLimits);
      resolveRunInputs(definition, inputs);
    } catch (err) {
      if (!(err instanceof SpurError)) throw err;
      problem = err.message;
    }
    const { run } = await deps.recorder.record({
      kind: 'scheduled',
      version: { pinned: version },
      inputs,
      trigger: { kind: 'schedule', id: schedule._id, scheduledTime, key },
      callback: schedule.callback ?? null,
      beforeInsert: assertInTime,
      ...(problem !== null ? { failedBecause: inputsNoLongerFit(problem) } : {}),
    });
    if (problem !== null) return { kind: 'recorded', run };
    return { kind: 'recorded', run, known: { workflowName: version.name, definition } };
  }

  return async function recordScheduledRun(
    scheduleId: string,
    scheduledTime: Date,
    key: string,
  ): Promise<ScheduledRecord> {
    const earlier = await deps.runRecords.recordOfTrigger(key);
    if (earlier) return { kind: 'recorded', run: earlier };
    const recording = await fires.begin(scheduleId, key);
    if (!recording) return { kind: 'gone', reason: `schedule ${scheduleId} is being deleted` };
    try {
      const schedule = await models.Schedule.findById(scheduleId).lean<ScheduleDoc>();
      if (!schedule) return { kind: 'gone', reason: `schedule ${scheduleId} is gone` };
      return await record(schedule, scheduledTime, key, recording.assertInTime);
    } catch (err) {
      if (!(err instanceof WorkflowPausedError)) throw err;
      await skips.record(scheduleId, key, scheduledTime, err.message);
      return { kind: 'skipped', reason: err.message };
    } finally {
      await recording.end();
    }
  };
}

export type ScheduledRunRecorder = ReturnType<typeof createScheduledRunRecorder>;
