import type { RunLauncher } from '../../src/runs/launcher';
import type { SubworkflowRunRecorder } from '../../src/runs/subworkflow-runs';
import type { RecordSubworkflowRunInput, SubworkflowPlan } from '../../src/contracts/subworkflow-contract';
import { childRunStart } from './schedule.activities';

export interface SubworkflowActivityDeps {
  temporal: { workflowIdPrefix: string };
  launcher: RunLauncher;
  recordSubworkflowRun: SubworkflowRunRecorder;
}

export function createSubworkflowActivities(deps: SubworkflowActivityDeps) {
  return {
    /**
     * A SubworkflowNode's child run: recorded once per parent run and node, however often this is
     * retried, and answered with how its workflow starts, which the parent does as its child.
     */
    async recordSubworkflowRun(input: RecordSubworkflowRunInput): Promise<SubworkflowPlan> {
      const recorded = await deps.recordSubworkflowRun(input);
      if (recorded.kind === 'refused') return recorded;
      const { run } = recorded;
      const planned = await deps.launcher.plan(run, recorded.known);
      if (planned.outcome === 'failed') return { kind: 'refused', reason: `child run ${run._id}: ${planned.message}` };
      if (planned.outcome !== 'ready') return { kind: 'refused', reason: `child run ${run._id} could not start` };
      return {
        ...childRunStart(run, planned.start, deps.temporal.workflowIdPrefix),
        outputNodeId: recorded.outputNodeId,
      };
    },
  };
}

export type SubworkflowActivities = ReturnType<typeof createSubworkflowActivities>;
