import type { Models } from '../../src/db/models';
import type { RunLauncher } from '../../src/runs/launcher';
import type { ScheduledRunRecorder } from '../../src/runs/scheduled-runs';
import type { RecordScheduledRunInput, ScheduledRunPlan } from '../../src/contracts/schedule-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';

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
      const recorded = await deps.recordScheduledRun(input.scheduleId, new Date(input.scheduledTime), input.fireKey);
      if (recorded.kind === 'gone') return { kind: 'none', runId: null, reason: recorded.reason };
      const { run } = recorded;
      // Its inputs no longer fit, or an earlier attempt's run already went on.
      if (run.status !== 'PENDING') return { kind: 'none', runId: run._id, reason: `the run is ${run.status}` };
      const planned = await deps.launcher.plan(run, recorded.known);
      if (planned.outcome !== 'ready')
        return { kind: 'none', runId: run._id, reason: planned.outcome === 'failed' ? planned.message : 'discarded' };
      return {
        kind: 'start',
        runId: run._id,
        workflowType: planned.start.type,
        workflowId: runWorkflowId(run._id, deps.temporal.workflowIdPrefix),
        args: planned.start.args,
        summary: planned.start.summary,
        spurWorkflowId: run.workflow_id,
        runType: run.run_type,
        startedBy: run.started_by_name ?? null,
      };
    },
  };
}
