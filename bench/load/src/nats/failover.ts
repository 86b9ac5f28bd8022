import { type NatsConnection, connect } from 'nats';
import { sleep } from '../processes.js';
import type { RunningCluster } from '../target.js';
import type { NatsLauncher } from './launcher.js';
import { addReplicatedStream } from './system.js';

/**
 * NATS's side of `--failover --compare nats` (issue 12 item 9: the failover ratio): a 3-node
 * JetStream cluster with default settings, an R3 stream, producers publishing through the
 * JetStream API (a window of publishes each, every publish retried after an error or a 1 s
 * timeout, the clients reconnecting to any node), and at `killAtMs` SIGKILL to the stream's
 * leader (the node that orders and acknowledges its writes, as a Shoal partition's primary does).
 *
 * The figure: milliseconds from the kill to the first acknowledgement of a publish SENT after
 * the kill (an ack of an earlier publish may have left the dead leader just before it died; one
 * of a later publish can only come from the new leader).
 */
export interface NatsFailoverResult {
  readonly killedNode: number;
  readonly firstAckAfterKillMs: number | null;
  readonly acknowledged: number;
  readonly failedPublishes: number;
}

export interface NatsFailoverOptions {
  readonly producers: number;
  readonly window: number;
  readonly messageSize: number;
  readonly killAtMs: number;
  /** How long to keep publishing after the kill at most (the run ends early once acks resumed for 2 s). */
  readonly afterKillMs: number;
  readonly log: (line: string) => void;
}

const PUBLISH_TIMEOUT_MS = 1000;
const STREAM = 'FAILOVER';
const SUBJECT = 'failover.p0';

export async function runNatsFailover(launcher: NatsLauncher, o: NatsFailoverOptions): Promise<NatsFailoverResult> {
  o.log('starting a 3-node NATS JetStream cluster…');
  const cluster = await launcher.start({ replicas: 3, shards: 1 });
  const connections: NatsConnection[] = [];
  const state = { killedAt: Number.NaN, firstAck: Number.NaN, acknowledged: 0, failed: 0, running: true };
  try {
    const admin = await connect({ servers: [...cluster.addresses], reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    connections.push(admin);
    const jsm = await admin.jetstreamManager({ timeout: 10_000 });
    await addReplicatedStream(jsm, STREAM, 'failover.>', 3);
    const payload = new Uint8Array(o.messageSize).fill(7);
    const lanes: Promise<void>[] = [];
    for (let p = 0; p < o.producers; p++) {
      const nc = await connect({ servers: [...cluster.addresses], reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
      connections.push(nc);
      const js = nc.jetstream({ timeout: PUBLISH_TIMEOUT_MS });
      for (let w = 0; w < o.window; w++) {
        lanes.push((async () => {
          while (state.running) {
            const sentAt = performance.now();
            try {
              await js.publish(SUBJECT, payload, { timeout: PUBLISH_TIMEOUT_MS });
              state.acknowledged++;
              if (sentAt > state.killedAt && Number.isNaN(state.firstAck)) state.firstAck = performance.now();
            } catch {
              state.failed++;
              await sleep(20);
            }
          }
        })());
      }
    }
    await sleep(o.killAtMs);
    const killed = await leaderIndex(jsm, cluster);
    o.log(`SIGKILL to NATS node ${killed}, the stream's leader, after ${o.killAtMs} ms of publishing`);
    state.killedAt = performance.now();
    await cluster.kill(killed, 'SIGKILL');
    const deadline = state.killedAt + o.afterKillMs;
    while (performance.now() < deadline && (Number.isNaN(state.firstAck) || performance.now() < state.firstAck + 2000)) await sleep(50);
    state.running = false;
    await Promise.all(lanes);
    return {
      killedNode: killed,
      firstAckAfterKillMs: Number.isNaN(state.firstAck) ? null : state.firstAck - state.killedAt,
      acknowledged: state.acknowledged,
      failedPublishes: state.failed,
    };
  } finally {
    state.running = false;
    for (const nc of connections) await nc.close().catch(() => undefined);
    await cluster.stop();
  }
}

/** The process index of the stream's leader (the launcher names node i `n<i>`). */
async function leaderIndex(jsm: Awaited<ReturnType<NatsConnection['jetstreamManager']>>, cluster: RunningCluster): Promise<number> {
  const info = await jsm.streams.info(STREAM);
  const leader = info.cluster?.leader ?? '';
  const index = /^n(\d+)$/.exec(leader) === null ? -1 : Number(leader.slice(1));
  if (index < 0 || index >= cluster.processes.length) throw new Error(`NATS stream ${STREAM}: unknown leader '${leader}'`);
  return index;
}
