/**
 * The nemesis's hands on a real cluster: signals to the node processes (SIGKILL, SIGTERM,
 * SIGSTOP/SIGCONT), restarts on the same data directory, and the in-test TCP proxies on every
 * replica link (blackhole or drop). It also watches every node: an exit the nemesis did not cause
 * (an assertion, a fatal error) is a crash, recorded with the node's last log lines.
 */
import type { TestCluster } from '../../integration/support/cluster.js';
import { describeFault, type Fault } from './schedule.js';
import { sleep } from './workload.js';

export interface Crash {
  readonly node: number;
  readonly code: number | null;
  readonly signal: string | null;
  readonly tail: string;
}

/** How long the nemesis waits for a view before it falls back to the metadata leader. */
const VIEW_TIMEOUT_MS = 2_000;
/** Log lines kept per crash. */
const CRASH_TAIL_LINES = 60;

export class Hands {
  readonly crashes: Crash[] = [];
  /** Restarts that failed (the node did not come back ready). */
  readonly failedStarts: string[] = [];
  readonly #cluster: TestCluster;
  readonly #stream: string;
  readonly #log: (line: string) => void;
  /** Nodes the nemesis is stopping on purpose: their exit is not a crash. */
  readonly #stopping = new Set<number>();
  readonly #paused = new Set<number>();

  constructor(cluster: TestCluster, stream: string, log: (line: string) => void) {
    this.#cluster = cluster;
    this.#stream = stream;
    this.#log = log;
    for (const node of cluster.nodes) this.#watch(node.id);
  }

  /** Applies one fault and heals it (every node back up, every link open). */
  async apply(fault: Fault): Promise<void> {
    this.#log(describeFault(fault));
    switch (fault.kind) {
      case 'kill': return this.#killAndRestart(fault.node, fault.holdMs);
      case 'kill-primary': return this.#killAndRestart(await this.primary(), fault.holdMs);
      case 'pause': return this.#pause(fault.node, fault.holdMs);
      case 'isolate': return this.#isolate(fault.node, fault.mode, fault.holdMs);
      case 'cut': return this.#cut(fault.a, fault.b, fault.holdMs);
      case 'restart-then-kill-primary': return this.#restartThenKill(fault.node, fault.gapMs, fault.holdMs);
      case 'rolling': return this.#rolling(fault.order, fault.gapMs, fault.signal);
    }
  }

  /** SIGCONT to every paused node, every proxy healed, every dead node restarted. */
  async healAll(): Promise<void> {
    for (const id of [...this.#paused]) this.#resume(id);
    this.#cluster.heal();
    await Promise.all(this.#cluster.nodes.filter((n) => !n.alive).map((n) => this.start(n.id)));
  }

  /** The node most data partitions name as primary (any live node's view); else the metadata leader. */
  async primary(): Promise<number> {
    for (const node of this.#cluster.nodes.filter((n) => n.alive && !this.#paused.has(n.id))) {
      try {
        const view = await Promise.race([this.#cluster.view(node.id), sleep(VIEW_TIMEOUT_MS).then(() => null)]);
        if (view === null) continue;
        const votes = new Map<number, number>();
        for (const [key, primary] of view.partitionPrimaries) {
          if (!key.startsWith(`${this.#stream}/`)) continue;
          const id = Number(primary.name.slice('node-'.length));
          votes.set(id, (votes.get(id) ?? 0) + 1);
        }
        const best = [...votes].sort((a, b) => b[1] - a[1])[0];
        if (best !== undefined) return best[0];
        if (view.leader !== null) return Number(view.leader.name.slice('node-'.length));
      } catch {
        // that node cannot answer now: ask the next
      }
    }
    return 0;
  }

  async kill(id: number, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const node = this.#cluster.node(id);
    if (this.#paused.has(id)) this.#resume(id);
    this.#stopping.add(id);
    await node.stop(signal);
  }

  async start(id: number): Promise<void> {
    if (this.#cluster.node(id).alive) return;
    try {
      await this.#cluster.startNode(id);
    } catch (error) {
      this.failedStarts.push(`node ${id}: ${error instanceof Error ? error.message.slice(0, 4000) : String(error)}`);
    }
    this.#stopping.delete(id);
    this.#watch(id);
  }

  /** Before the cluster stops: nothing may stay SIGSTOPped (it would never exit). */
  releaseAll(): void {
    for (const id of [...this.#paused]) this.#resume(id);
    for (const node of this.#cluster.nodes) this.#stopping.add(node.id);
  }

  #watch(id: number): void {
    const node = this.#cluster.node(id);
    if (!node.alive) return;
    const child = node.child;
    void node.exited.then(({ code, signal }) => {
      if (this.#stopping.has(id) || node.child !== child) return;
      this.crashes.push({ node: id, code, signal, tail: node.tail(CRASH_TAIL_LINES) });
      this.#log(`node ${id} CRASHED (code ${code}, signal ${signal})`);
    });
  }

  async #killAndRestart(id: number, holdMs: number): Promise<void> {
    await this.kill(id);
    await sleep(holdMs);
    await this.start(id);
  }

  #pauseNow(id: number): void {
    if (!this.#cluster.node(id).alive) return;
    this.#cluster.node(id).child?.kill('SIGSTOP');
    this.#paused.add(id);
  }

  #resume(id: number): void {
    this.#cluster.node(id).child?.kill('SIGCONT');
    this.#paused.delete(id);
  }

  async #pause(id: number, holdMs: number): Promise<void> {
    this.#pauseNow(id);
    await sleep(holdMs);
    this.#resume(id);
  }

  async #isolate(id: number, mode: 'hold' | 'drop', holdMs: number): Promise<void> {
    if (mode === 'hold') this.#cluster.isolate(id);
    else for (const other of this.#cluster.nodes) if (other.id !== id) this.#cluster.proxy(id, other.id).partition('both', 'drop');
    await sleep(holdMs);
    this.#cluster.heal();
  }

  async #cut(a: number, b: number, holdMs: number): Promise<void> {
    this.#cluster.proxy(a, b).partition('both', 'drop');
    await sleep(holdMs);
    this.#cluster.proxy(a, b).heal();
  }

  /** Restart `id`; `gapMs` after it is back (still catching up), kill the primary. */
  async #restartThenKill(id: number, gapMs: number, holdMs: number): Promise<void> {
    await this.kill(id);
    await this.start(id);
    await sleep(gapMs);
    const primary = await this.primary();
    this.#log(`  then kill -9 node ${primary}`);
    await this.#killAndRestart(primary, holdMs);
  }

  /** Each node in turn: stop, start, and `gapMs` after it is ready (not caught up), the next. */
  async #rolling(order: readonly number[], gapMs: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    for (const id of order) {
      await this.kill(id, signal);
      await this.start(id);
      await sleep(gapMs);
    }
  }
}
