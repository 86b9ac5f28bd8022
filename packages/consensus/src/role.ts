/**
 * `ReplicaRole`: where this replica stands in its group, read live from the core without
 * allocating (hosts read it per request and per tick). Read-only: nothing here changes state.
 * Hosts use it instead of the core's fields (the core is not part of the package's interface).
 */
import type { Core } from './core.js';
import type { Op, ReplicaIndex, Status, View } from './types.js';

export class ReplicaRole {
  readonly #c: Core;

  constructor(core: Core) {
    this.#c = core;
  }

  get replica(): ReplicaIndex {
    return this.#c.self;
  }
  get view(): View {
    return this.#c.view;
  }
  get logView(): View {
    return this.#c.logView;
  }
  get status(): Status {
    return this.#c.status;
  }
  /** Status normal (the replica runs its log view). */
  get normal(): boolean {
    return this.#c.status === 'normal';
  }
  /** The primary by index of the current view (whether or not it leads yet). */
  get primaryIndex(): ReplicaIndex {
    return this.#c.primaryIndex();
  }
  /** This replica is the current view's primary by index. */
  get primaryByIndex(): boolean {
    return this.#c.isPrimaryByIndex();
  }
  /** §4.1: primary by index, normal, not ceded. */
  get actingPrimary(): boolean {
    return this.#c.isActingPrimary();
  }
  /** §4.3: acting primary, not transferring, commit_min == commit_max, past the recovery barrier: may admit. */
  get caughtUpPrimary(): boolean {
    return this.#c.isCaughtUpPrimary();
  }
  /** A restarted replica refuses to lead until a view transition. */
  get ceded(): boolean {
    return this.#c.ceded;
  }
  get op(): Op {
    return this.#c.op;
  }
  get commitMin(): Op {
    return this.#c.commitMin;
  }
  get commitMax(): Op {
    return this.#c.commitMax;
  }
  get transferring(): boolean {
    return this.#c.transferring();
  }
  /** The replica may have acked ops it no longer holds: it abstains (then votes blind). */
  get journalIncomplete(): boolean {
    return this.#c.journalIncomplete;
  }
  get votesBlind(): boolean {
    return this.#c.votesBlind;
  }
  /**
   * Ops this replica may have acknowledged and no longer holds (`faulty`: a power loss beyond
   * the last fdatasync, a truncation of agreeing entries). 0 once repaired or superseded by a
   * newly installed log view.
   */
  get faultyOps(): number {
    return this.#c.journal.faulty.size;
  }
  /** The view the superblock durably holds, or null when none was written or restored. */
  get durableView(): number | null {
    return this.#c.sb.durable?.view ?? null;
  }
  /** The reason the core stopped (`fatal`), or null. */
  get stopped(): string | null {
    return this.#c.stopped;
  }
}
