import type { LimitRule, SlotAsk, SlotRelease } from '../../src/contracts/limit-contract';
import type { BreakerRecord, WaitReason } from '../../src/contracts/breaker-contract';
import { Breaker, type BreakerState, closedBreaker } from './breaker';

const MINUTE_MS = 60_000;
/**
 * A run is told its call waits only once it has waited this long: a wait shorter than this shows
 * in the task's waited_ms alone, without a notice and a save of the run for it.
 */
export const TELL_WAITING_AFTER_MS = 1000;

interface Holder {
  requestId: string;
  workflowId: string;
  leaseUntil: number;
}

interface Waiter {
  ask: SlotAsk;
  askedAt: number;
  /** Whether the run has been told it waits. */
  told: boolean;
  /** What the run was told it waits for (absent on waiters of before breakers: a slot). */
  toldReason?: WaitReason;
  /** It waited while the breaker was open. */
  parked?: boolean;
}

/** A request granted within the last minute: what requests_per_minute and tokens_per_minute count. */
interface Granted {
  requestId: string;
  at: number;
  tokens: number;
}

/** Everything a limit knows: carried whole into its next execution (continue-as-new). */
export interface GateState {
  rule: LimitRule | null;
  holders: Holder[];
  /** Waiting asks per run, runs in the order they are served next (round robin). */
  queues: Array<[string, Waiter[]]>;
  minute: Granted[];
  heldBackUntil: number;
  /** Absent in the state of a limit of before breakers: closed. */
  breaker?: BreakerState;
  /** How often the breaker opened, ever: the workflow tells the metrics what it adds. */
  openings?: number;
}

export const emptyGate = (rule: LimitRule | null = null): GateState => ({
  rule,
  holders: [],
  queues: [],
  minute: [],
  heldBackUntil: 0,
  breaker: closedBreaker(),
  openings: 0,
});

/** A grant: the ask, how long it waited, and whether the breaker parked it meanwhile. */
export interface Granting {
  ask: SlotAsk;
  waitedMs: number;
  parked: boolean;
}

/**
 * One limit's slots, decided in its workflow (deterministic: times are the workflow's). Fair
 * across runs: the run served last goes to the back, so a run with many calls waiting cannot
 * starve another with one. Within a run, asks are served in order; the head of the line is never
 * skipped for a smaller ask behind it.
 */
export class LimitGate {
  private readonly queues: Map<string, Waiter[]>;
  private readonly breaker: Breaker;

  constructor(private readonly state: GateState) {
    this.queues = new Map(state.queues);
    this.breaker = new Breaker((state.breaker ??= closedBreaker()));
  }

  setRule(rule: LimitRule | null, now: number): void {
    this.state.rule = rule;
    // A removed limit takes its breaker with it, an operator's opening too.
    if (rule === null) this.breaker.switchTo('closed', now);
    else this.breaker.ruleChanged(rule.breaker, now);
  }

  /** An operator opens or closes the breaker. */
  switchBreaker(state: 'open' | 'closed', now: number): void {
    if (this.breaker.switchTo(state, now)) this.opened();
  }

  /** What the limit's entry shows of its breaker. */
  get breakerRecord(): BreakerRecord {
    return this.breaker.record();
  }

  get openings(): number {
    return this.state.openings ?? 0;
  }

  /** Idempotent: an ask already holding or waiting (a retried signal) is not added again. */
  ask(ask: SlotAsk, now: number): void {
    this.setRule(ask.rule, now);
    if (this.state.holders.some((h) => h.requestId === ask.requestId)) return;
    const line = this.queues.get(ask.workflowId) ?? [];
    if (line.some((w) => w.ask.requestId === ask.requestId)) return;
    line.push({ ask, askedAt: now, told: false });
    this.queues.set(ask.workflowId, line);
  }

  /**
   * A holder gives its slot back (its used tokens replace the estimate), and the breaker learns how
   * its call ended (once: a second release of the same request finds no holder); a waiter leaves the line.
   */
  release(release: SlotRelease, now: number): void {
    const holders = this.state.holders.length;
    this.state.holders = this.state.holders.filter((h) => h.requestId !== release.requestId);
    if (
      this.state.holders.length < holders &&
      this.breaker.ended(this.state.rule?.breaker, release.requestId, release.outcome, now)
    )
      this.opened();
    const counted = this.state.minute.find((g) => g.requestId === release.requestId);
    if (counted && release.tokens !== undefined) counted.tokens = release.tokens;
    for (const [workflowId, line] of this.queues) {
      const left = line.filter((w) => w.ask.requestId !== release.requestId);
      if (left.length === line.length) continue;
      if (left.length > 0) this.queues.set(workflowId, left);
      else this.queues.delete(workflowId);
    }
  }

  holdBack(forMs: number, now: number): void {
    this.state.heldBackUntil = Math.max(this.state.heldBackUntil, now + forMs);
  }

  /** The asks granted now, in fair order, each with how long it waited; their slots are taken. */
  grant(now: number): Granting[] {
    this.expire(now);
    this.breaker.tick(this.state.rule?.breaker, now);
    if (this.breaker.parks) for (const line of this.queues.values()) for (const w of line) w.parked = true;
    const granted: Granting[] = [];
    for (;;) {
      const next = this.queues.entries().next();
      if (next.done) break;
      const [workflowId, line] = next.value;
      const waiter = line[0] as Waiter;
      if (!this.fits(waiter.ask, now)) break;
      line.shift();
      // Served: the run goes to the back of the line of runs.
      this.queues.delete(workflowId);
      if (line.length > 0) this.queues.set(workflowId, line);
      this.state.holders.push({
        requestId: waiter.ask.requestId,
        workflowId,
        leaseUntil: now + waiter.ask.leaseMs,
      });
      this.state.minute.push({ requestId: waiter.ask.requestId, at: now, tokens: waiter.ask.tokens });
      this.breaker.granted(waiter.ask.requestId);
      granted.push({ ask: waiter.ask, waitedMs: now - waiter.askedAt, parked: waiter.parked === true });
    }
    return granted;
  }

  /**
   * Asks waiting for TELL_WAITING_AFTER_MS whose run has not been told what they wait for (a slot,
   * or the breaker), with that reason (marked told).
   */
  untold(now: number): Array<{ ask: SlotAsk; reason: WaitReason }> {
    const reason: WaitReason = this.breaker.parks ? 'breaker_open' : 'limit';
    const asks: Array<{ ask: SlotAsk; reason: WaitReason }> = [];
    for (const line of this.queues.values())
      for (const w of line) {
        const told = w.told ? (w.toldReason ?? 'limit') : null;
        if (told !== reason && now - w.askedAt >= TELL_WAITING_AFTER_MS) {
          w.told = true;
          w.toldReason = reason;
          asks.push({ ask: w.ask, reason });
        }
      }
    return asks;
  }

  /**
   * When time alone may let the next ask through (a minute's grant ages out, a hold-back or a lease
   * ends, the breaker half-opens) or change what there is to keep (a failure leaves the breaker's window).
   */
  nextWake(now: number): number | undefined {
    const times: number[] = this.state.holders.map((h) => h.leaseUntil);
    const breakerWake = this.breaker.nextWake(this.state.rule?.breaker, now);
    if (breakerWake !== undefined) times.push(breakerWake);
    if (this.queues.size > 0) {
      if (this.state.heldBackUntil > now) times.push(this.state.heldBackUntil);
      const oldest = this.state.minute[0];
      if (oldest) times.push(oldest.at + MINUTE_MS);
      for (const line of this.queues.values())
        for (const w of line) if (!w.told) times.push(w.askedAt + TELL_WAITING_AFTER_MS);
    }
    const later = times.filter((t) => t > now);
    return later.length > 0 ? Math.min(...later) : undefined;
  }

  /** Nothing held, nothing waiting, and a closed breaker with no failure to remember: the limit may end. */
  idle(now: number): boolean {
    return (
      this.state.holders.length === 0 && this.queues.size === 0 && this.breaker.quiet(this.state.rule?.breaker, now)
    );
  }

  snapshot(): GateState {
    return { ...this.state, queues: [...this.queues.entries()] };
  }

  private fits(ask: SlotAsk, now: number): boolean {
    const rule = this.state.rule;
    if (!rule) return true; // the limit was removed: everyone waiting goes
    if (now < this.state.heldBackUntil) return false;
    const holders = this.state.holders.map((h) => h.requestId);
    if (!this.breaker.allows(rule.breaker, holders, now)) return false;
    if (rule.max_concurrent !== undefined && this.state.holders.length >= rule.max_concurrent) return false;
    const minute = this.state.minute;
    if (rule.requests_per_minute !== undefined && minute.length >= rule.requests_per_minute) return false;
    if (rule.tokens_per_minute !== undefined && minute.length > 0) {
      // A request larger than the whole minute's tokens still goes, alone, once the minute is empty.
      const used = minute.reduce((n, g) => n + g.tokens, 0);
      if (used + ask.tokens > rule.tokens_per_minute) return false;
    }
    return true;
  }

  private opened(): void {
    this.state.openings = (this.state.openings ?? 0) + 1;
  }

  /** Grants older than a minute stop counting; holders past their lease (a run that never released) go. */
  private expire(now: number): void {
    this.state.minute = this.state.minute.filter((g) => g.at + MINUTE_MS > now);
    this.state.holders = this.state.holders.filter((h) => h.leaseUntil > now);
  }
}
