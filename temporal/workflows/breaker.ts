import type { BreakerRecord, BreakerRule, CallOutcome } from '../../src/contracts/breaker-contract';

/** A breaker's whole state, carried in its limit's GateState (continue-as-new). */
export interface BreakerState extends BreakerRecord {
  /** The half-open breaker's probe call (its request id) while it is out. */
  probe: string | null;
}

export const closedBreaker = (now = 0): BreakerState => ({
  state: 'closed',
  since: now,
  opened_by: null,
  failure_times: [],
  probe: null,
});

/**
 * One limit's breaker, decided in its workflow (deterministic: times are the workflow's). Closed,
 * it counts the provider's failures in a sliding window, and once one has failed it lets out no
 * more calls at once than could still fail before it opens, so the provider sees at most
 * `failures` failing calls. Open, it lets none out; after `open_seconds` (opened by failures, not
 * by hand) it is half open and lets exactly one probe out: its success closes it, its failure
 * opens it again.
 */
export class Breaker {
  constructor(private readonly s: BreakerState) {}

  get state(): BreakerState['state'] {
    return this.s.state;
  }

  /** Open or half open: the limit's waiting calls wait for the breaker. */
  get parks(): boolean {
    return this.s.state !== 'closed';
  }

  /** Whether one more call may go now, with `holders` of the limit's calls out; time moves an open breaker to half open. */
  allows(rule: BreakerRule | undefined, holders: readonly string[], now: number): boolean {
    // Without a breaker in the rule, only an operator's opening parks calls.
    if (!rule) return this.s.state === 'closed';
    if (this.s.state === 'open') return false;
    // A probe whose holder went (its lease ran out, its run ended) without an outcome: another goes.
    if (this.s.state === 'half_open') return this.s.probe === null || !holders.includes(this.s.probe);
    const failures = this.failuresIn(rule, now);
    return failures === 0 || holders.length + failures < rule.failures;
  }

  /** A call went: in a half-open breaker it is the probe. */
  granted(requestId: string): void {
    if (this.s.state === 'half_open') this.s.probe = requestId;
  }

  /**
   * A holder's call ended. Answers whether the breaker opened. A call that ended while the breaker
   * was open (it went before) changes nothing; a probe without an outcome lets another probe go.
   */
  ended(rule: BreakerRule | undefined, requestId: string, outcome: CallOutcome | undefined, now: number): boolean {
    const probe = this.s.state === 'half_open' && this.s.probe === requestId;
    if (probe) this.s.probe = null;
    if (!rule || outcome === undefined) return false;
    if (probe) {
      if (outcome === 'ok') this.close(now);
      else this.open('failures', now);
      return outcome !== 'ok';
    }
    if (this.s.state !== 'closed' || outcome === 'ok') return false;
    this.s.failure_times = [...this.s.failure_times, now].slice(-rule.failures);
    if (this.failuresIn(rule, now) < rule.failures) return false;
    this.open('failures', now);
    return true;
  }

  /** An operator's switch; answers whether the breaker opened. */
  switchTo(state: 'open' | 'closed', now: number): boolean {
    if (state === 'closed') {
      if (this.s.state !== 'closed' || this.s.failure_times.length > 0) this.close(now);
      return false;
    }
    const opening = this.s.state !== 'open';
    if (opening || this.s.opened_by !== 'operator') this.open('operator', now);
    return opening;
  }

  /** The rule lost its breaker: nothing is parked by failures any more (an operator's opening stays). */
  ruleChanged(rule: BreakerRule | undefined, now: number): void {
    if (!rule && this.s.opened_by !== 'operator' && this.s.state !== 'closed') this.close(now);
  }

  /** When time alone changes what the breaker allows: it half-opens, or the oldest failure leaves the window. */
  nextWake(rule: BreakerRule | undefined, now: number): number | undefined {
    if (!rule) return undefined;
    if (this.s.state === 'open' && this.s.opened_by === 'failures') return this.s.since + rule.open_seconds * 1000;
    if (this.s.state !== 'closed') return undefined;
    const oldest = this.s.failure_times.find((t) => t + rule.window_seconds * 1000 > now);
    return oldest === undefined ? undefined : oldest + rule.window_seconds * 1000;
  }

  /** Nothing for the limit to keep running for: closed, no failure in its window. */
  quiet(rule: BreakerRule | undefined, now: number): boolean {
    return this.s.state === 'closed' && (!rule || this.failuresIn(rule, now) === 0);
  }

  record(): BreakerRecord {
    const { state, since, opened_by, failure_times } = this.s;
    return { state, since, opened_by, failure_times: [...failure_times] };
  }

  /** Time moves an open breaker (opened by failures) to half open after `open_seconds`. */
  tick(rule: BreakerRule | undefined, now: number): void {
    if (
      rule &&
      this.s.state === 'open' &&
      this.s.opened_by === 'failures' &&
      now >= this.s.since + rule.open_seconds * 1000
    ) {
      this.s.state = 'half_open';
      this.s.since = now;
      this.s.probe = null;
    }
  }

  private failuresIn(rule: BreakerRule, now: number): number {
    return this.s.failure_times.filter((t) => t + rule.window_seconds * 1000 > now).length;
  }

  private open(by: 'failures' | 'operator', now: number): void {
    Object.assign(this.s, { state: 'open', since: now, opened_by: by, probe: null });
  }

  private close(now: number): void {
    Object.assign(this.s, { state: 'closed', since: now, opened_by: null, failure_times: [], probe: null });
  }
}
