import type { Models, RunDoc } from '../../src/db/models';
import type { RunLauncher, WorkflowStart } from '../../src/runs/launcher';
import type { ScheduledRunRecorder } from '../../src/runs/scheduled-runs';
import type { ChildRunStart, RecordScheduledRunInput, ScheduledRunPlan } from '../../src/contracts/schedule-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { type ScheduleOutcome, metrics } from '../../src/metrics/metrics';

export interface ScheduleActivityDeps {
  models: Models;
  temporal: { workflowIdPrefix: string };
  launcher: RunLauncher;
  recordScheduledRun: ScheduledRunRecorder;
}

export function createScheduleActivities(deps: ScheduleActivityDeps) {
  return {
    /**
     * A schedule's fire: records its run (once per fire, however often this is retried) and
     * answers how its workflow starts, which the fire's workflow does as its child.
     */
    async recordScheduledRun(input: RecordScheduledRunInput): Promise<ScheduledRunPlan> {
      const fired = (outcome: ScheduleOutcome) => metrics.scheduleFires.inc({ outcome });
      const recorded = await deps.recordScheduledRun(input.scheduleId, new Date(input.scheduledTime), input.fireKey);
      // A fire of a paused workflow's schedule is skipped: the fire ends as a vanished schedule's does.
      if (recorded.kind !== 'recorded') {
        fired(recorded.kind);
        return { kind: 'none', runId: null, reason: recorded.reason };
      }
      const { run } = recorded;
      // Its inputs no longer fit, or an earlier attempt's run already went on.
      if (run.status !== 'PENDING') {
        fired(run.status === 'FAILED' ? 'failed' : 'repeated');
        return { kind: 'none', runId: run._id, reason: `the run is ${run.status}` };
      }
      const planned = await deps.launcher.plan(run, recorded.known);
      if (planned.outcome !== 'ready') {
        fired(planned.outcome === 'failed' ? 'failed' : 'repeated');
        return { kind: 'none', runId: run._id, reason: planned.outcome === 'failed' ? planned.message : 'discarded' };
      }
      fired('started');
      return childRunStart(run, planned.start, deps.temporal.workflowIdPrefix);
    },
  };
}

/** How a workflow starts a recorded run's workflow as its child: the launcher's start, under the run's workflow id. */
export function childRunStart(run: RunDoc, start: WorkflowStart, workflowIdPrefix: string): ChildRunStart {
  return {
    kind: 'start',
    runId: run._id,
    workflowType: start.type,
    workflowId: runWorkflowId(run._id, workflowIdPrefix),
    args: start.args,
    summary: start.summary,
    spurWorkflowId: run.workflow_id,
    runType: run.run_type,
    startedBy: run.started_by_name ?? null,
    listedAs: start.listedAs,
  };
}
