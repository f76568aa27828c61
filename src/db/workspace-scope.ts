import { AsyncLocalStorage } from 'node:async_hooks';
import { SpurWorkspace } from '../contracts/search-attributes';
import { type WorkClass, type WorkQueue, workShare } from '../contracts/work-share';

/** The workspace everything of an installation without workspaces belongs to. */
export const DEFAULT_WORKSPACE = 'default';

const scope = new AsyncLocalStorage<string>();

/**
 * The workspace the current request or activity acts in. The gate enters it for every request it
 * lets through, and the worker for every activity of a workspace's workflow; storage reads it on
 * every query of a workspace's collection (workspace-owned.ts), so no service passes it along and
 * none can forget it.
 */
export const workspaceScope = {
  /** Runs `work` (and everything it starts, awaited or not) in the workspace. */
  run<T>(workspaceId: string, work: () => T): T {
    return scope.run(workspaceId, work);
  },
  /** The workspace of the code running now; null outside any (the fleet's own loops: reconcile, limits). */
  current(): string | null {
    return scope.getStore() ?? null;
  },
  /**
   * Runs `work` outside any workspace: what a few lookups need before they know whose a thing is
   * (a webhook's token, an approval link). It sees every workspace: keep it to that lookup.
   */
  unscoped<T>(work: () => T): T {
    return scope.exit(work);
  },
};

/** The search attribute a workflow started for a workspace carries: the current one unless named (undefined: not named). */
export function workspaceAttribute(workspaceId: string | null = workspaceScope.current()) {
  return workspaceId === null ? [] : [{ key: SpurWorkspace, value: workspaceId }];
}

/**
 * The task queue and share keys (src/contracts/work-share.ts) of a workflow started for a workspace:
 * the one named, else the current one (a run recorded moments ago is stamped with it at insert, not
 * in the document at hand).
 */
export function workspaceShare(
  workClass: WorkClass,
  queue: Pick<WorkQueue, 'taskQueue' | 'fairShare'>,
  workspaceId?: string | null,
) {
  return workShare(workClass, workspaceId ?? workspaceScope.current(), queue);
}
