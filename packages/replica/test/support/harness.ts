/**
 * A small deterministic harness for driver tests: n MetadataDrivers (or PartitionDrivers) on their
 * own SimDisks, an in-memory FIFO network, client answers collected per token.
 */
import type { ClientToken, Completion } from '@shoal/consensus';
import { Prng } from '@shoal/stdx';
import { type DeferredDiskQueue, SimDisk, type Disk } from '@shoal/storage';
import { MetadataDriver, PartitionDriver, type AppliedOp, type SessionResult } from '../../src/index.js';

export const CLUSTER = 0x5348_4f41_4c00_0000_0000_0000_0000_0042n;
/** Stream 3, topic 0, partition 0: with 3 replicas its preferred primary (leadership.ts) is replica 0, as the tests assume. */
export const PARTITION_GROUP = (3n << 32n) | (0n << 20n) | 0n;

export interface Sent {
  readonly from: number;
  readonly to: number;
  readonly frame: Uint8Array;
}

/** Counts fdatasync calls of a disk, and every call of any kind (a closed driver makes none). */
export class CountingDisk implements Disk {
  readonly inner: SimDisk;
  fdatasyncs = 0;
  calls = 0;
  constructor(inner: SimDisk) {
    this.inner = inner;
  }
  #n<T>(value: () => T): T {
    this.calls++;
    return value();
  }
  open: Disk['open'] = (p, m) => this.#n(() => this.inner.open(p, m));
  close: Disk['close'] = (fd) => this.#n(() => this.inner.close(fd));
  read: Disk['read'] = (fd, b, o, l, p) => this.#n(() => this.inner.read(fd, b, o, l, p));
  write: Disk['write'] = (fd, b, o, l, p) => this.#n(() => this.inner.write(fd, b, o, l, p));
  writev: Disk['writev'] = (fd, b, p) => this.#n(() => this.inner.writev(fd, b, p));
  size: Disk['size'] = (fd) => this.#n(() => this.inner.size(fd));
  truncate: Disk['truncate'] = (fd, l) => this.#n(() => this.inner.truncate(fd, l));
  fsync: Disk['fsync'] = (fd) => this.#n(() => this.inner.fsync(fd));
  fdatasync: Disk['fdatasync'] = (fd) => {
    this.fdatasyncs++;
    this.#n(() => this.inner.fdatasync(fd));
  };
  fsyncDir: Disk['fsyncDir'] = (p) => this.#n(() => this.inner.fsyncDir(p));
  rename: Disk['rename'] = (a, b) => this.#n(() => this.inner.rename(a, b));
  unlink: Disk['unlink'] = (p) => this.#n(() => this.inner.unlink(p));
  mkdirp: Disk['mkdirp'] = (p) => this.#n(() => this.inner.mkdirp(p));
  rmdir: Disk['rmdir'] = (p) => this.#n(() => this.inner.rmdir(p));
  removeTree: Disk['removeTree'] = (p) => this.#n(() => this.inner.removeTree(p));
  readdir: Disk['readdir'] = (p) => this.#n(() => this.inner.readdir(p));
  stat: Disk['stat'] = (p) => this.#n(() => this.inner.stat(p));
  bootId: Disk['bootId'] = () => this.inner.bootId();
}

export class Harness<D extends MetadataDriver | PartitionDriver> {
  readonly n: number;
  readonly disks: CountingDisk[] = [];
  readonly drivers: (D | null)[] = [];
  readonly network: Sent[] = [];
  readonly answers = new Map<ClientToken, Uint8Array[]>();
  readonly sessions: SessionResult[] = [];
  readonly applied: AppliedOp[][] = [];
  readonly completed: Completion[][] = [];
  now = 0;
  readonly #open: (h: Harness<D>, i: number) => D;
  readonly prng = new Prng(7);

  constructor(n: number, open: (h: Harness<D>, i: number) => D) {
    this.n = n;
    this.#open = open;
    for (let i = 0; i < n; i++) {
      this.disks.push(new CountingDisk(new SimDisk({ seed: 100 + i })));
      this.applied.push([]);
      this.completed.push([]);
      this.drivers.push(null);
    }
    for (let i = 0; i < n; i++) this.boot(i);
  }

  boot(i: number): D {
    const d = this.#open(this, i);
    this.drivers[i] = d;
    return d;
  }

  driver(i: number): D {
    const d = this.drivers[i];
    if (d === null || d === undefined) throw new Error(`driver ${i} is down`);
    return d;
  }

  /** Power loss of replica i: in-memory state gone, unsynced writes lost. */
  crash(i: number): void {
    this.drivers[i] = null;
    this.disks[i]?.inner.crash();
    for (let k = this.network.length - 1; k >= 0; k--) {
      const m = this.network[k] as Sent;
      if (m.to === i || m.from === i) this.network.splice(k, 1);
    }
  }

  options(i: number) {
    return {
      config: { cluster: CLUSTER, replica: i, replicaCount: this.n },
      disk: this.disks[i] as CountingDisk,
      transport: {
        sendToReplica: (to: number, frame: Uint8Array) => this.network.push({ from: i, to, frame }),
        sendToClient: (_client: bigint, token: ClientToken | null, frame: Uint8Array) => {
          if (token === null) return;
          const list = this.answers.get(token) ?? [];
          list.push(frame);
          this.answers.set(token, list);
        },
      },
      time: { realtimeMicros: () => 1_700_000_000_000_000n + BigInt(this.now) * 10_000n },
      prng: this.prng.fork(),
      hooks: {
        sessionResult: (r: SessionResult) => this.sessions.push(r),
        applied: (op: AppliedOp) => this.applied[i]?.push(op),
        completed: (c: Completion) => this.completed[i]?.push(c),
        fatal: (reason: string, detail: string) => {
          throw new Error(`driver ${i} fatal ${reason}: ${detail}`);
        },
      },
    };
  }

  /** Delivers queued frames (FIFO) until none is left (`filter` returning true drops one). */
  deliver(filter: (m: Sent) => boolean = () => false): void {
    for (let guard = 0; this.network.length > 0; guard++) {
      if (guard > 100_000) throw new Error('network never drains');
      const m = this.network.shift() as Sent;
      if (filter(m)) continue;
      this.drivers[m.to]?.onMessage(m.frame);
    }
  }

  flush(): void {
    for (const d of this.drivers) d?.flush();
  }

  /** One round: deliver, flush everywhere; repeated until quiet. */
  settle(rounds = 50, filter?: (m: Sent) => boolean): void {
    for (let r = 0; r < rounds; r++) {
      this.deliver(filter);
      this.flush();
      if (this.network.length === 0) return;
    }
  }

  tick(count = 1, filter?: (m: Sent) => boolean): void {
    for (let t = 0; t < count; t++) {
      this.now += 1;
      for (const d of this.drivers) d?.tick();
      this.settle(50, filter);
    }
  }
}

export function metadataHarness(n: number): Harness<MetadataDriver> {
  return new Harness<MetadataDriver>(n, (h, i) => {
    const opened = MetadataDriver.open({ ...h.options(i), dir: '/data/metadata' });
    if (!opened.ok) throw new Error(`open ${i}: ${opened.reason} ${opened.detail}`);
    return opened.driver;
  });
}

/** The directory of `partitionHarness`'s partition. */
export const PARTITION_DIR = '/data/streams/1/topics/0/partitions/0';

/**
 * `queueOf`: each boot of replica i sends its frontier work to the DeferredDiskQueue this returns
 * (on the replica's disk; run by the test, as a shard's disk thread; a test that crashes the
 * replica drops the old one).
 */
export function partitionHarness(
  n: number, storage: Parameters<typeof PartitionDriver.open>[0]['storage'] = {}, queueOf?: (i: number, disk: Disk) => DeferredDiskQueue,
): Harness<PartitionDriver> {
  return new Harness<PartitionDriver>(n, (h, i) => {
    const queue = queueOf?.(i, h.disks[i] as CountingDisk);
    const opened = PartitionDriver.open({
      ...h.options(i), dir: PARTITION_DIR, group: PARTITION_GROUP,
      identity: { streamId: 1, topicId: 0, partitionId: 0 }, storage, createdRevision: 1n,
      ...(queue === undefined ? {} : { diskQueue: queue }),
    });
    if (!opened.ok) throw new Error(`open ${i}: ${opened.reason} ${opened.detail}`);
    return opened.driver;
  });
}
