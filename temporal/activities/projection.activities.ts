import type { Models } from '../../src/db/models';
import { type PauseRecord, type PauseResolution, type ProgressSave, createRunProjection } from '../../src/db/run-projection';

/** Local activities that keep the run's MongoDB projection in step with the workflow. */
export function createProjectionActivities(models: Models) {
  const projection = createRunProjection(models);
  return {
    async saveProgress(input: ProgressSave): Promise<void> {
      await projection.save(input);
    },
    async recordPause(input: { pause: PauseRecord; progress: ProgressSave }): Promise<void> {
      await Promise.all([projection.recordPause(input.pause), projection.save(input.progress)]);
    },
    async resolvePause(input: { resolution: PauseResolution; progress: ProgressSave }): Promise<void> {
      await Promise.all([projection.resolvePause(input.resolution), projection.save(input.progress)]);
    },
  };
}
