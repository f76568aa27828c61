import type { ActivitySlotInfo, CustomSlotSupplier, SlotInfo, WorkerTuner } from '@temporalio/worker';
import type { EvalActivities } from './activities';
import type { Config } from '../src/config/settings';
import { type BulkPacer, type RecentWork, createBulkPacer, createRecentWork } from './activities/bulk-pacer';
import { type CpuSampler, createCpuSampler } from './activities/host-load';

/**
 * How a worker process hands out its slots. The main queue's are fixed, and so are the bulk
 * queue's workflow tasks; the bulk queue's activities, and the rows of inline batch chunks (which
 * run inside one activity, where slots cannot reach), take places of pacers that give way to the
 * main queue's work while the host is past SPUR_BULK_TARGET_CPU (docs/performance.md#fair-share).
 */
export function createWorkerSlots(temporal: Config['temporal']) {
  const cpu = createCpuSampler();
  const mainWork = createRecentWork(MAIN_QUEUE_QUIET_MS);
  const bulk = { targetCpu: temporal.bulkTargetCpu, needed: mainWork.recent, floor: BULK_FLOOR };
  return {
    main: mainSlots(cpu, temporal.maxActivities, mainWork),
    bulk: bulkSlots(createBulkPacer(cpu, { ...bulk, ceiling: temporal.maxActivities })),
    bulkRows: createBulkPacer(cpu, { ...bulk, ceiling: Number.POSITIVE_INFINITY }),
  };
}

/** The SDK's default number of workflow tasks a worker runs at once. */
const WORKFLOW_TASK_SLOTS = 40;
/**
 * What bulk work keeps however busy the host, per kind (activities, inline rows): two, so a batch
 * always moves. A child-mode row costs its workflow tasks here and in Temporal
 * besides its call, so a larger floor alone kept a 2-core host past the target (docs/performance.md#fair-share).
 */
const BULK_FLOOR = 2;
/** Bulk work gives way while a main-queue task runs here, and this long after the last one ended. */
const MAIN_QUEUE_QUIET_MS = 3000;
/**
 * Bulk activities that spend their time waiting on other bulk work rather than working: an eval's
 * scorer waits for its batch's rows to end. They give their place back as they start: held, two
 * evals' scorers took the whole floor from the rows they waited on, and a 12-row eval beside
 * interactive runs sat for minutes until the host went quiet.
 */
const WAITS_ON_BULK: ReadonlySet<string> = new Set<keyof EvalActivities>(['scoreEvalRows']);
const waitsOnBulk = (info: ActivitySlotInfo | undefined) => info !== undefined && WAITS_ON_BULK.has(info.activityType);

/**
 * The main queue's slots: fixed (beyond `maxActivities` activities wait in Temporal's queue, where
 * they cost nothing), each task noted as it starts so bulk work knows to give way.
 */
function mainSlots(cpu: CpuSampler, maxActivities: number, work: RecentWork): WorkerTuner {
  // At a target of 1 a pacer never reads the CPU: only its ceiling holds.
  const fixed = (ceiling: number) => createBulkPacer(cpu, { targetCpu: 1, floor: ceiling, ceiling });
  return {
    workflowTaskSlotSupplier: pacedSlots(fixed(WORKFLOW_TASK_SLOTS), work),
    activityTaskSlotSupplier: pacedSlots(fixed(maxActivities), work),
    localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 100 },
    nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
  };
}

/**
 * The bulk queue's slots: its activities take places of the bulk pacer, which hands out fewer
 * while the host is past the CPU target. Its workflow tasks keep the SDK's fixed number: a worker
 * reserves a slot before each poll, sticky and normal alike, so pacing them down to a few would let
 * long polls of one queue hold every slot while tasks on the other wait out their timeout (a
 * child-mode eval then crawled); held activities keep the rows' workflow tasks few anyway.
 */
function bulkSlots(activities: BulkPacer): WorkerTuner {
  const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });
  return {
    workflowTaskSlotSupplier: fixed(WORKFLOW_TASK_SLOTS),
    activityTaskSlotSupplier: pacedActivitySlots(activities),
    localActivityTaskSlotSupplier: fixed(100),
    nexusTaskSlotSupplier: fixed(1),
  };
}

/**
 * The bulk queue's activity slots: the pacer's places, except that one whose task only waits on
 * other bulk work (WAITS_ON_BULK) gives its place back once it knows what its task is.
 */
function pacedActivitySlots(pacer: BulkPacer): CustomSlotSupplier<ActivitySlotInfo> {
  const paced = pacedSlots<ActivitySlotInfo>(pacer);
  return {
    ...paced,
    markSlotUsed: (ctx) => {
      if (waitsOnBulk(ctx.slotInfo)) pacer.release();
    },
    // A slot released unused (its poll timed out) has no task: it still holds its place.
    releaseSlot: (ctx) => {
      if (!waitsOnBulk(ctx.slotInfo)) pacer.release();
    },
  };
}

/**
 * A slot supplier handing out the pacer's places: a slot is held from its reservation (a poll may
 * wait on it) to its release. `work` is told when a slot's task starts.
 */
function pacedSlots<SI extends SlotInfo>(pacer: BulkPacer, work?: RecentWork): CustomSlotSupplier<SI> {
  return {
    type: 'custom',
    async reserveSlot(_ctx, abortSignal) {
      await pacer.acquire(abortSignal);
      return {};
    },
    tryReserveSlot: () => (pacer.tryAcquire() ? {} : null),
    markSlotUsed: () => work?.saw(),
    // A slot whose poll timed out has no task (no slotInfo): only a used one ends a task.
    releaseSlot: (ctx) => {
      if (ctx.slotInfo !== undefined) work?.ended();
      pacer.release();
    },
  };
}
