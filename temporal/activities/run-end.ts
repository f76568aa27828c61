import { carriedEndContent, finalContentDigest } from '../../src/engine/carried-end';
import type { RunEndPlan } from '../../src/contracts/run-contract';
import type { ProgressSave, SavedAs, TaskWrite } from '../../src/engine/run-contract';
import type { RunEnded } from './projection.activities';

/** The projection's save (projection.activities.ts), as a run's last step calls it. */
export type SaveProgress = (save: ProgressSave & { ended?: RunEnded }) => Promise<SavedAs>;

/**
 * Writes the run's final save from its last step's task writes, when the run ends with them
 * (carriedEndContent): on what the step's own save left (`saved`), or on what the workflow knew.
 * Returns its digest for the workflow, which then sends no final save of its own; undefined when
 * none was written: the run does not end here, or the save failed (it is left to the workflow's own
 * final save, never retried with the step).
 */
export async function writeRunEnd(
  saveProgress: SaveProgress,
  runId: string,
  end: RunEndPlan,
  writes: readonly TaskWrite[],
  saved?: SavedAs,
): Promise<string | undefined> {
  const content = carriedEndContent(end, writes);
  if (!content) return undefined;
  const known = saved === undefined ? end.known : saved !== null && end.known ? { ...end.known, ...saved } : undefined;
  try {
    await saveProgress({
      runId,
      tasks: { records: content.tasks },
      run: content.run,
      ...(known ? { known } : {}),
      ...(end.ended ? { ended: end.ended } : {}),
    });
    return finalContentDigest(content);
  } catch {
    return undefined;
  }
}
