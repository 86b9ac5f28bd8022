/**
 * Tick-driven timers (§4.2, pitfall 5).
 *
 * - `start`: arm with the base interval and clear the attempt counter;
 * - `reset`: the same, but only on a running timer (resetting a stopped timer arms nothing);
 * - `stop`: disarm;
 * - `tick`: a running, unfired timer counts down; at 0 it FIRES and stays fired until re-armed
 *   (`start`, `reset` or `backoff`); a fired timer never fires twice;
 * - `backoff`: attempts += 1, b = base × 2^min(attempts, 4) (≤ 16 × base), countdown = b + uniform(0..=b).
 */
import { assert, type Prng } from '@shoal/stdx';

export class Timer {
  readonly name: string;
  readonly base: number;
  #running = false;
  #fired = false;
  #countdown = 0;
  #attempts = 0;

  constructor(name: string, base: number) {
    assert(Number.isInteger(base) && base >= 1, `timer ${name}: base must be >= 1 tick`);
    this.name = name;
    this.base = base;
  }

  get running(): boolean {
    return this.#running;
  }
  get fired(): boolean {
    return this.#fired;
  }
  get countdown(): number {
    return this.#countdown;
  }
  get attempts(): number {
    return this.#attempts;
  }

  start(): void {
    this.#running = true;
    this.#fired = false;
    this.#countdown = this.base;
    this.#attempts = 0;
  }

  reset(): void {
    if (this.#running) this.start();
  }

  /**
   * Starts with a random first countdown in 1..=base, then every `base` (`reset`). Periodic
   * broadcasts of many groups that started in the same tick (a node booting hundreds of
   * partitions, a view change of all of them) would otherwise fire in the same tick forever and
   * overrun the per-peer send queue, dropping the same tail groups every time.
   */
  startPhased(prng: Prng): void {
    this.start();
    this.#countdown = 1 + prng.below(this.base);
  }

  stop(): void {
    this.#running = false;
    this.#fired = false;
    this.#countdown = 0;
  }

  backoff(prng: Prng): void {
    assert(this.#running, `timer ${this.name}: backoff on a stopped timer`);
    this.#attempts += 1;
    const b = this.base * 2 ** Math.min(this.#attempts, 4);
    this.#countdown = b + prng.below(b + 1);
    this.#fired = false;
  }

  /** Advances one tick; true exactly on the tick the timer fires. */
  tick(): boolean {
    if (!this.#running || this.#fired) return false;
    assert(this.#countdown > 0, `timer ${this.name}: running with no countdown`);
    this.#countdown -= 1;
    if (this.#countdown === 0) {
      this.#fired = true;
      return true;
    }
    return false;
  }
}

/** Every timer of one replica (§4.2 table). */
export class Timers {
  readonly prepare: Timer;
  readonly commitMessage: Timer;
  readonly normalHeartbeat: Timer;
  readonly startViewChangeMessage: Timer;
  readonly doViewChangeMessage: Timer;
  readonly viewChangeStatus: Timer;
  readonly requestStartViewMessage: Timer;

  constructor(ticks: {
    prepare: number;
    commitMessage: number;
    normalHeartbeat: number;
    viewChangeRetransmit: number;
    viewChangeStatus: number;
    requestStartView: number;
  }) {
    this.prepare = new Timer('prepare', ticks.prepare);
    this.commitMessage = new Timer('commit_message', ticks.commitMessage);
    this.normalHeartbeat = new Timer('normal_heartbeat', ticks.normalHeartbeat);
    this.startViewChangeMessage = new Timer('start_view_change_message', ticks.viewChangeRetransmit);
    this.doViewChangeMessage = new Timer('do_view_change_message', ticks.viewChangeRetransmit);
    this.viewChangeStatus = new Timer('view_change_status', ticks.viewChangeStatus);
    this.requestStartViewMessage = new Timer('request_start_view_message', ticks.requestStartView);
  }

  all(): Timer[] {
    return [
      this.prepare,
      this.commitMessage,
      this.normalHeartbeat,
      this.startViewChangeMessage,
      this.doViewChangeMessage,
      this.viewChangeStatus,
      this.requestStartViewMessage,
    ];
  }

  stopViewChangeTimers(): void {
    this.startViewChangeMessage.stop();
    this.doViewChangeMessage.stop();
    this.viewChangeStatus.stop();
    this.requestStartViewMessage.stop();
  }
}
