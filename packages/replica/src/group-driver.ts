/**
 * `GroupDriver`: one consensus group's core plus the loop that performs its effects, in order,
 * against a plane backend (storage + state machine, implemented by `MetadataDriver` and
 * `PartitionDriver`) and the host's transport.
 *
 *   entry point ─▶ core ─▶ effects ─▶ perform in order ─▶ completions ─▶ core ─▶ … (until quiescent)
 *                                        │ journal_append: appendNoSync, completion held
 *                                        ▼
 *   flush() ─▶ ONE fdatasync for every held append ─▶ journal_written completions ─▶ core ─▶ …
 *
 * Durability order: the core withholds every send that vouches for a WAL entry until its
 * `journal_written` completion arrives, and that completion is produced only after the group
 * fdatasync in `flush()`. Superblock, snapshot and install steps are durable before their
 * completions. Completions can be delayed by `completionDelay` ticks (the simulator's disk
 * latency); delivery order among ready completions is FIFO.
 *
 * Shutdown (`close`): a last flush performs every effect the core has produced and fdatasyncs
 * every held append (so nothing acknowledged or committed is left in memory only); then the
 * driver is closed: every entry point (frames, requests, ticks, flushes) is a no-op, completions
 * still delayed are dropped, and only then does the plane close its files. Input that arrives
 * after that (a peer's frame still in a ring, a password hash finishing, a timer) therefore never
 * reaches a closed fd, nor an fd number the process has since reused for another file.
 */
import { UNCHECKED_INGRESS, type ClientRequest, type Completion, type Effect, type FrameIngress, type Replica, type ReplicaStatus, type RequestOutcome } from '@shoal/consensus';
import { assert } from '@shoal/stdx';
import type { DriverHooks, DriverOptions, FatalReason, Transport } from './ports.js';

/** A drain that has not quiesced after this many rounds is a livelock: our bug. */
const DRAIN_ROUNDS_MAX = 1_000_000;
/** flush() repeats while completions keep producing appends; bound on the repeats. */
const FLUSH_ROUNDS_MAX = 10_000;

interface Delayed {
  readonly due: number;
  readonly completion: Completion;
}

/** The arguments a plane subclass hands the base class. */
export interface GroupDriverParts {
  readonly group: bigint;
  readonly replica: Replica;
  readonly options: DriverOptions;
}

export abstract class GroupDriver {
  readonly group: bigint;
  /** The core (read-only inspection: metrics, checkers; never call its entry points directly). */
  readonly replica: Replica;
  readonly #transport: Transport;
  readonly #hooks: DriverHooks;
  readonly #autoFlush: boolean;
  readonly #delay: ((completion: Completion) => number) | null;
  #ticks = 0;
  #ready: Completion[] = [];
  #delayed: Delayed[] = [];
  /** WAL appends performed (appendNoSync) whose completion waits for the group fdatasync. */
  #unsynced: { op: number; checksum: bigint }[] = [];
  #fatal: string | null = null;
  #closed = false;
  #draining = false;

  protected constructor(parts: GroupDriverParts) {
    this.group = parts.group;
    this.replica = parts.replica;
    this.#transport = parts.options.transport;
    this.#hooks = parts.options.hooks ?? {};
    this.#autoFlush = parts.options.autoFlush ?? false;
    this.#delay = parts.options.completionDelay ?? null;
  }

  // -------------------------------------------------------------------------------------------
  // Entry points.

  /**
   * A replica-plane frame for this group. Returns null when handled, else the drop reason.
   * `ingress`: what the host's link already did with it (validated, buffer handed over).
   */
  onMessage(frame: Uint8Array, ingress: FrameIngress = UNCHECKED_INGRESS): string | null {
    if (this.#closed) return 'closed';
    if (this.#fatal !== null) return 'stopped';
    const refused = this.admitFrame(frame, ingress);
    if (refused !== null) {
      this.#hooks.dropped?.(frame.length > 60 ? (frame[60] as number) : -1, frame.length > 61 ? (frame[61] as number) : -1, refused);
      return refused;
    }
    const reason = this.replica.onMessage(frame, ingress);
    this.#after();
    return reason;
  }

  /** An authenticated (and, on the metadata plane, admitted) client request. */
  onRequest(request: ClientRequest): RequestOutcome {
    if (this.halted) return 'dropped';
    const outcome = this.replica.onRequest(request);
    this.#after();
    return outcome;
  }

  /**
   * The host lost its link to this group's primary beyond its grace (runtime
   * engine/primary-link-watch.ts): the core may start a view change now. True when it did.
   */
  primaryUnreachable(): boolean {
    if (this.halted) return false;
    const started = this.replica.primaryUnreachable();
    this.#after();
    return started;
  }

  /** One 10 ms tick: due deferred completions first, then the core's tick. */
  tick(): void {
    if (this.halted) return;
    this.#ticks += 1;
    if (this.#delayed.length > 0) {
      const due = this.#delayed.filter((d) => d.due <= this.#ticks);
      if (due.length > 0) {
        this.#delayed = this.#delayed.filter((d) => d.due > this.#ticks);
        for (const d of due) this.#ready.push(d.completion);
        this.drain();
      }
    }
    if (this.halted) return;
    this.replica.tick();
    this.afterCoreTick();
    this.#after();
  }

  /** After the core's tick, before its effects run: a plane's own per-tick policy (partition hand-back). */
  protected afterCoreTick(): void {}

  /**
   * End of a host turn: one fdatasync covers every WAL append performed since the last flush
   * (group commit); their completions then release the sends that vouch for them.
   */
  flush(): void {
    for (let round = 0; !this.halted; round++) {
      assert(round < FLUSH_ROUNDS_MAX, 'flush: appends keep coming (livelock)');
      this.drain();
      if (this.#unsynced.length === 0 || this.halted) return;
      const synced = this.syncJournal();
      if (synced !== null) {
        this.stop('journal_io', synced);
        return;
      }
      const done = this.#unsynced;
      this.#unsynced = [];
      for (const u of done) this.#complete({ kind: 'journal_written', op: u.op, checksum: u.checksum, ok: true });
    }
  }

  /** True when a flush() would do something (held appends or ready completions). */
  get needsFlush(): boolean {
    return !this.halted && (this.#unsynced.length > 0 || this.#ready.length > 0);
  }

  /**
   * Clean shutdown: the last flush (every produced effect performed, every held append
   * fdatasynced and completed, until the core is quiescent), then closed for good, then the
   * plane's files closed (`closeFiles`). Idempotent. A stopped driver closes its files too.
   */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.shut();
    this.closeFiles();
  }

  /** True once `close` (or `shut`) began: no entry point does anything any more. */
  get closed(): boolean {
    return this.#closed;
  }

  get status(): ReplicaStatus {
    return this.replica.status;
  }

  /** The reason the driver stopped, or null while it runs. */
  get fatal(): string | null {
    return this.#fatal;
  }

  /** Driver ticks so far. */
  get ticks(): number {
    return this.#ticks;
  }

  /** Completions not yet delivered (held appends, ready, delayed): for tests and checkers. */
  get pendingCompletions(): number {
    return this.#unsynced.length + this.#ready.length + this.#delayed.length;
  }

  // -------------------------------------------------------------------------------------------
  // For subclasses.

  protected get hooks(): DriverHooks {
    return this.#hooks;
  }

  /** Stops the driver: every later entry point is a no-op. The hook is called once. */
  protected stop(reason: FatalReason, detail: string): void {
    if (this.#fatal !== null) return;
    this.#fatal = `${reason}: ${detail}`;
    this.#hooks.fatal?.(reason, detail);
  }

  /**
   * Closed without the last flush (a deleted partition): from here no input is taken and no
   * effect performed; what was not yet performed or completed is dropped.
   */
  protected shut(): void {
    this.#closed = true;
    this.#ready = [];
    this.#delayed = [];
    this.#unsynced = [];
  }

  /** Stopped (fatal) or closed: a plane's own entry points that touch storage check this. */
  protected get halted(): boolean {
    return this.#fatal !== null || this.#closed;
  }

  /** Runs a subclass entry point into the core and performs what it produced. */
  protected run<T>(body: () => T, fallback: T): T {
    if (this.halted) return fallback;
    const result = body();
    this.#after();
    return result;
  }

  /** Drains the core's effects and ready completions until quiescent. */
  protected drain(): void {
    if (this.#draining) return; // re-entrant call from a hook: the outer loop continues
    this.#draining = true;
    try {
      for (let round = 0; !this.halted; round++) {
        assert(round < DRAIN_ROUNDS_MAX, 'driver: effects never quiesce (livelock)');
        this.beforeEffects();
        if (this.halted) return;
        const effects = this.replica.takeEffects();
        for (const effect of effects) {
          this.#perform(effect);
          if (this.halted) return;
        }
        if (effects.length > 0) continue;
        const next = this.#ready.shift();
        if (next === undefined) return;
        this.#hooks.completed?.(next);
        this.replica.onStorageDone(next);
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Called before the effects of each core call are performed (partition: write committed batches). */
  protected beforeEffects(): void {}

  /**
   * Sees every inbound frame before the core: a plane's extra ingress checks (a reason drops the
   * frame) and bookkeeping (requester: remember accepted manifests).
   */
  protected admitFrame(_frame: Uint8Array, _ingress: FrameIngress): string | null {
    return null;
  }

  /** fdatasync of the WAL; null when done, else why it failed (the WAL is then poisoned). */
  protected syncJournal(): string | null {
    return null;
  }

  /** Plane effects (storage, state transfer). Returns the completion to deliver, or null. */
  protected abstract performStorage(effect: Effect): Completion | null;

  /** The plane's files closed (after the last flush; the driver takes no input any more). */
  protected abstract closeFiles(): void;

  // -------------------------------------------------------------------------------------------

  #after(): void {
    this.drain();
    if (this.#autoFlush) this.flush();
  }

  #complete(completion: Completion): void {
    const delay = this.#delay === null ? 0 : this.#delay(completion);
    if (delay > 0) this.#delayed.push({ due: this.#ticks + delay, completion });
    else this.#ready.push(completion);
  }

  #perform(effect: Effect): void {
    const hooks = this.#hooks;
    switch (effect.kind) {
      case 'send':
        this.#transport.sendToReplica(effect.to, effect.frame);
        return;
      case 'client_frame':
        this.#transport.sendToClient(effect.client, effect.token, effect.frame);
        return;
      case 'journal_append': {
        const done = this.performStorage(effect);
        // A performed append waits for the group fdatasync; a failed one completes at once.
        if (done === null) this.#unsynced.push({ op: effect.op, checksum: effect.checksum });
        else this.#complete(done);
        return;
      }
      case 'committed':
        hooks.committed?.(effect.op, effect.operation, hooks.committed === undefined ? null : this.replica.journalChecksum(effect.op));
        return;
      case 'session_result':
        hooks.sessionResult?.({
          token: effect.token, client: effect.client, session: effect.session, outcome: effect.outcome,
          epoch: effect.epoch, watermark: effect.watermark,
        });
        return;
      case 'dropped':
        hooks.dropped?.(effect.command, effect.from, effect.reason);
        return;
      case 'event':
        hooks.event?.(effect.name, effect.detail);
        return;
      case 'role':
        hooks.role?.({ view: effect.view, primary: effect.primary, acting: effect.acting });
        return;
      case 'fatal':
        this.stop('consensus', effect.reason);
        return;
      default: {
        const done = this.performStorage(effect);
        if (done !== null) this.#complete(done);
      }
    }
  }
}
