import type { Models } from '../../src/db/models';
import { type PauseRecord, type PauseResolution, type PlannedTask, createRunProjection } from '../../src/db/run-projection';
import type { NodeOutput, TaskWrite } from '../shared/run-contract';
import type { RunStatus } from '../shared/statuses';

/** Local activities that keep the run's MongoDB projection in step with the workflow. */
export function createProjectionActivities(models: Models) {
  const projection = createRunProjection(models);
  return {
    async startRun(input: { runId: string; tasks: PlannedTask[] }): Promise<void> {
      await projection.start(input.runId, input.tasks);
    },
    async recordTasks(input: { runId: string; writes: TaskWrite[] }): Promise<void> {
      await projection.writeTasks(input.runId, input.writes);
    },
    async setRunStatus(input: { runId: string; status: RunStatus; message: string | null }): Promise<void> {
      await projection.setStatus(input.runId, input.status, input.message);
    },
    async recordPause(input: PauseRecord): Promise<void> {
      await projection.recordPause(input);
    },
    async resolvePause(input: PauseResolution): Promise<void> {
      await projection.resolvePause(input);
    },
    async cancelRun(input: { runId: string }): Promise<void> {
      await projection.cancel(input.runId);
    },
    async finishRun(input: { runId: string; status: RunStatus; message: string | null; outputsByTitle: Record<string, NodeOutput> }): Promise<void> {
      await projection.finish(input.runId, input.status, input.message, input.outputsByTitle);
    },
  };
}
