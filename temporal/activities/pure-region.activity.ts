import { storageFailureKind } from '../../src/db/failure-kinds';
import { GraphWalker } from '../../src/engine/graph-walker';
import { PURE_REGION_ACTIVITY, type RegionOutcome, regionLevel } from '../../src/engine/pure-region';
import type { EndingRegionInput, EndingRegionResult, TracedRegionInput } from '../../src/contracts/run-contract';
import type { TaskWrite } from '../../src/engine/run-contract';
import { type SaveProgress, writeRunEnd } from './run-end';
import { type NodeActivityDeps, executeNode } from './execute-node.activity';

/** A failure the region's step may outlive (its storage away): the whole step is retried by its policy. */
class RetryRegion extends Error {
  constructor(readonly original: unknown) {
    super('retry the region');
  }
}

/**
 * One local activity for a pure region: its nodes run here, one after another, with the engine's
 * own walker, so inputs, routes, failures and upstream cancels are exactly those of nodes run one
 * activity each. A node that fails is recorded FAILED (as its own activity would have been, its
 * failure being deterministic); storage being away fails the step, which is retried whole.
 */
export function createPureRegionActivity(
  deps: NodeActivityDeps,
  saveProgress: SaveProgress,
): Record<
  typeof PURE_REGION_ACTIVITY,
  (input: TracedRegionInput | EndingRegionInput) => Promise<RegionOutcome[] | EndingRegionResult>
> {
  return {
    [PURE_REGION_ACTIVITY]: async (input) => {
      const outcomes = await runPureRegion(deps, input);
      if (!('end' in input)) return outcomes;
      // The run's last step: it writes the run's final save when the run ends with it (run-end.ts).
      const ended = await writeRunEnd(
        saveProgress,
        input.runId,
        input.end,
        outcomes.map((o) => o.write),
      );
      return { outcomes, ...(ended ? { ended } : {}) };
    },
  };
}

export async function runPureRegion(
  deps: NodeActivityDeps,
  { runId, region, trace }: TracedRegionInput,
): Promise<RegionOutcome[]> {
  const { level, preset } = regionLevel(region);
  const writes: TaskWrite[] = [];
  const walker = new GraphWalker(
    runId,
    { recordTask: (write) => writes.push(write), onNodeFailed: () => undefined },
    {
      execute: async (node, input) => {
        try {
          return await executeNode(deps, { runId, node, input, ...(trace ? { trace } : {}) });
        } catch (err) {
          throw storageFailureKind(err) === 'unavailable' ? new RetryRegion(err) : err;
        }
      },
      isCancellation: (err) => err instanceof RetryRegion,
    },
  );
  const states = await walker.runLevel(level, {}, true, { preset }).catch((err: unknown) => {
    throw err instanceof RetryRegion ? err.original : err;
  });
  // Only the region's nodes are walked (the preset predecessors are not), so only they wrote.
  return writes.flatMap((write) => {
    const state = states.get(write.nodeId);
    return state ? [{ nodeId: write.nodeId, state, write }] : [];
  });
}
