import { randomBytes } from 'node:crypto';
import { type FailoverResult, type RunResult, runBenchmark } from './driver.js';
import { ExactlyOnceChecker } from './exactly-once.js';
import type { BenchOptions, Workload } from './flags.js';
import type { Progress } from './progress.js';
import { ShoalLauncher } from './shoal/launcher.js';
import { ShoalSystem } from './shoal/system.js';
import type { AckInfo } from './target.js';

/**
 * `--failover`: a 3-node Shoal cluster (started by the bench, default timeouts), a steady lean
 * produce, and at the `killAtS`-th measured second SIGKILL to the node that acknowledged the last
 * write (the partitions' primary). The figure: milliseconds from the kill to the first write
 * acknowledged after it by another node (the new primary). The producer re-sends requests whose
 * connection died (outcome unknown) to the next node; duplicates of those are reported apart
 * ("retry duplicates"), while a lost or duplicated acknowledged write still fails the run.
 */
export const FAILOVER_DEFAULT_DURATION_S = 20;

export interface FailoverOutcome {
  readonly workload: Workload;
  readonly run: RunResult;
}

export function failoverWorkload(options: BenchOptions): Workload {
  const explicitLength = options.explicit.has('durationS') || options.explicit.has('messages');
  return {
    ...options.base,
    replicas: 3,
    ...(explicitLength ? {} : { durationS: FAILOVER_DEFAULT_DURATION_S, messages: null }),
  };
}

export async function runFailover(
  options: BenchOptions, io: { progress: Progress; log: (line: string) => void }, launcher = new ShoalLauncher(),
): Promise<FailoverOutcome> {
  const workload = failoverWorkload(options);
  launcher.check();
  io.log(`starting a 3-node Shoal cluster (${workload.shards} shard(s) per node)…`);
  const cluster = await launcher.start({ replicas: 3, shards: workload.shards });
  const system = new ShoalSystem({ addresses: cluster.addresses, cluster, credentials: launcher.credentials });
  const killAtS = Math.max(1, Math.min(3, Math.floor((workload.durationS ?? 8) / 4)));
  let lastAckNode: string | null = null;
  let killed: { index: number; address: string; at: number } | null = null;
  let firstAck: { node: string; at: number } | null = null;
  let resent = 0;
  try {
    const [target] = system.targets(workload);
    if (target === undefined) throw new Error('no lean Shoal target');
    const run = { id: `failover-${randomBytes(3).toString('hex')}`, workload, runTag: randomBytes(4).readUInt32LE(0) };
    const checker = new ExactlyOnceChecker(run.runTag);
    await target.prepare(run, {
      resent: (request) => {
        resent++;
        checker.retried(request.producer, request.firstSeq, request.count);
      },
    });
    const result = await runBenchmark(target, run, {
      progress: io.progress,
      label: 'failover · shoal/lean',
      serverPids: () => system.serverPids(),
      idleMs: 30_000,
      onAck: (ack: AckInfo, at: number) => {
        if (ack.node !== undefined) lastAckNode = ack.node;
        if (killed !== null && firstAck === null && ack.node !== undefined && ack.node !== killed.address && at > killed.at) firstAck = { node: ack.node, at };
      },
      onMeasuredSecond: (second) => {
        if (second !== killAtS || killed !== null) return;
        const address = lastAckNode ?? cluster.addresses[0] as string;
        const index = cluster.addresses.indexOf(address);
        killed = { index, address, at: performance.now() };
        io.log(`SIGKILL to node ${index} (${address}), the primary, at second ${second} of the measured produce`);
        void cluster.kill(index, 'SIGKILL');
      },
    }, checker);
    await target.cleanup().catch(() => undefined);
    // One view change per group is the failover; more is a spurious one (or a second election).
    io.log(`view changes: metadata ${system.viewChanges.metadata}, partitions ${system.viewChanges.partition} (1 each: the failover's only)`);
    const victim = killed as { index: number; address: string; at: number } | null;
    const first = firstAck as { node: string; at: number } | null;
    const failover: FailoverResult = {
      killedNode: victim?.index ?? -1,
      killedAddress: victim?.address ?? '',
      firstAckAfterKillMs: victim === null || first === null ? null : first.at - victim.at,
      newPrimary: first?.node ?? null,
      resentRequests: resent,
    };
    return { workload, run: { ...result, failover } };
  } finally {
    await system.close();
  }
}
