import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  askSlotSignal,
  breakerSwitchSignal,
  releaseSlotSignal,
  ruleChangedSignal,
  slotGrantedSignal,
  slotQueuedSignal,
} from '../../src/contracts/limit-contract';
import { type GateState, LimitGate, emptyGate } from './limit-gate';
import type { LimitActivities } from '../activities/limit.activities';

const local = proxyLocalActivities<LimitActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

export interface ModelLimitInput {
  key: string;
  state?: GateState;
}

/** How long a limit with nothing held or waiting stays, before it ends (the next ask starts it again). */
const IDLE_MS = 60_000;
/** Continue as new well before Temporal's history limits: each request adds about ten events. */
const HISTORY_EVENTS = 5000;

/**
 * One fleet-wide limit (`limit-<key>`): runs signal asks, it answers each with a grant signal when
 * a slot is free, and takes releases back. Every worker and host shares it because it is one
 * workflow; a run waiting for its grant holds no worker slot (it waits in its own workflow).
 */
export async function spurModelLimit(input: ModelLimitInput): Promise<void> {
  const gate = new LimitGate(input.state ?? emptyGate());
  // Before the handlers: a switch that came with the start (signal-with-start) is dispatched as they
  // are set, and a recorder made after it would take the opened breaker as already written and counted.
  const recorder = new BreakerRecorder(input.key, gate);
  let changed = false;
  setHandler(askSlotSignal, (ask) => {
    gate.ask(ask, Date.now());
    changed = true;
  });
  setHandler(releaseSlotSignal, (release) => {
    if (release.holdBackMs) gate.holdBack(release.holdBackMs, Date.now());
    gate.release(release, Date.now());
    changed = true;
  });
  setHandler(ruleChangedSignal, (rule) => {
    gate.setRule(rule, Date.now());
    changed = true;
  });
  setHandler(breakerSwitchSignal, ({ state, rule }) => {
    gate.setRule(rule, Date.now());
    gate.switchBreaker(state, Date.now());
    changed = true;
  });

  // Grants and notices are sent without waiting for Temporal to deliver them: the next grant
  // must not wait for the slowest run to take its signal. A run that ended meanwhile never
  // releases, so its slot goes back when its signal fails.
  let sending = 0;
  const send = (requestId: string, signal: () => Promise<void>) => {
    sending++;
    signal()
      .catch(() => {
        gate.release({ requestId }, Date.now());
        changed = true;
      })
      .finally(() => sending--);
  };

  for (;;) {
    changed = false;
    const now = Date.now();
    for (const { ask, waitedMs, parked } of gate.grant(now)) {
      const run = getExternalWorkflowHandle(ask.workflowId);
      const grant = { requestId: ask.requestId, key: input.key, waitedMs, ...(parked ? { parked } : {}) };
      send(ask.requestId, () => run.signal(slotGrantedSignal, grant));
    }
    for (const { ask, reason } of gate.untold(now)) {
      const run = getExternalWorkflowHandle(ask.workflowId);
      send(ask.requestId, () => run.signal(slotQueuedSignal, { requestId: ask.requestId, key: input.key, reason }));
    }
    recorder.note();
    if (changed) continue;
    const info = workflowInfo();
    if (info.historyLength > HISTORY_EVENTS || info.continueAsNewSuggested) {
      await condition(() => sending === 0 && recorder.idle && allHandlersFinished());
      return continueAsNew<typeof spurModelLimit>({ key: input.key, state: gate.snapshot() });
    }
    if (gate.idle(Date.now())) {
      if (await condition(() => changed, IDLE_MS)) continue;
      await condition(() => sending === 0 && recorder.idle);
      if (!changed) return;
      continue;
    }
    const wake = gate.nextWake(Date.now());
    if (wake === undefined) await condition(() => changed);
    else await condition(() => changed, Math.max(1, wake - Date.now()));
  }
}

/**
 * Writes the breaker's state to the limit's entry (GET /api/limits/ reads it there) whenever it
 * changed, one write at a time so the last state is the one stored, without holding up grants.
 * The write's activity also counts the openings in the metrics: workflow code counts nothing.
 */
class BreakerRecorder {
  private last: string;
  private counted: number;
  private writing = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly key: string,
    private readonly gate: LimitGate,
  ) {
    this.last = JSON.stringify(gate.breakerRecord);
    this.counted = gate.openings;
  }

  get idle(): boolean {
    return this.writing === 0;
  }

  note(): void {
    const record = this.gate.breakerRecord;
    const text = JSON.stringify(record);
    const openings = this.gate.openings - this.counted;
    if (text === this.last && openings === 0) return;
    this.last = text;
    this.counted = this.gate.openings;
    this.writing++;
    this.chain = this.chain
      .then(() => local.recordBreaker({ key: this.key, record, openings }))
      .catch(() => undefined) // only a write that outlived its retries; the next change writes again
      .finally(() => this.writing--);
  }
}
