import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  askSlotSignal,
  releaseSlotSignal,
  ruleChangedSignal,
  slotGrantedSignal,
  slotQueuedSignal,
} from '../../src/contracts/limit-contract';
import { type GateState, LimitGate, emptyGate } from './limit-gate';

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
  let changed = false;
  setHandler(askSlotSignal, (ask) => {
    gate.ask(ask, Date.now());
    changed = true;
  });
  setHandler(releaseSlotSignal, (release) => {
    if (release.holdBackMs) gate.holdBack(release.holdBackMs, Date.now());
    gate.release(release);
    changed = true;
  });
  setHandler(ruleChangedSignal, (rule) => {
    gate.setRule(rule);
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
        gate.release({ requestId });
        changed = true;
      })
      .finally(() => sending--);
  };

  for (;;) {
    changed = false;
    const now = Date.now();
    for (const { ask, waitedMs } of gate.grant(now)) {
      const run = getExternalWorkflowHandle(ask.workflowId);
      send(ask.requestId, () => run.signal(slotGrantedSignal, { requestId: ask.requestId, key: input.key, waitedMs }));
    }
    for (const ask of gate.untold(now)) {
      const run = getExternalWorkflowHandle(ask.workflowId);
      send(ask.requestId, () => run.signal(slotQueuedSignal, { requestId: ask.requestId, key: input.key }));
    }
    if (changed) continue;
    const info = workflowInfo();
    if (info.historyLength > HISTORY_EVENTS || info.continueAsNewSuggested) {
      await condition(() => sending === 0 && allHandlersFinished());
      return continueAsNew<typeof spurModelLimit>({ key: input.key, state: gate.snapshot() });
    }
    if (gate.idle) {
      if (await condition(() => changed, IDLE_MS)) continue;
      await condition(() => sending === 0);
      if (!changed) return;
      continue;
    }
    const wake = gate.nextWake(Date.now());
    if (wake === undefined) await condition(() => changed);
    else await condition(() => changed, Math.max(1, wake - Date.now()));
  }
}
