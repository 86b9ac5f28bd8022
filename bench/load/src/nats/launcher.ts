import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { connect } from 'nats';
import { freePorts } from '../ports.js';
import { ManagedProcess, ProcessCluster, sleep } from '../processes.js';
import { type ClusterLauncher, type ClusterShape, type RunningCluster, TargetUnavailableError } from '../target.js';

/**
 * A local NATS JetStream cluster on loopback, from the `nats-server` Debian package: one
 * generated config per node (server name, client port, cluster routes to every other node,
 * JetStream with file storage in a temp dir), unique free ports, started and stopped by the
 * bench. `start` resolves once the JetStream meta group has a leader (account info answers).
 */
export const NATS_INSTALL_HINT = 'nats-server is not installed: install it with `apt-get install nats-server` (Debian package), then rerun.';

const SEARCH_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin'];

/** The nats-server binary (PATH first, then the sbin directories the Debian package uses), or null. */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string | null {
  const fromEnv = env['NATS_SERVER_BIN'];
  if (fromEnv !== undefined && fromEnv !== '') return existsSync(fromEnv) ? fromEnv : null;
  const dirs = [...(env['PATH'] ?? '').split(delimiter).filter((d) => d !== ''), ...SEARCH_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, 'nats-server');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

export function natsServerVersion(binary: string): string {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export interface NatsNodeConfig {
  readonly name: string;
  readonly clientPort: number;
  readonly clusterPort: number;
  readonly storeDir: string;
  readonly routes: readonly number[];
  readonly clusterName: string;
}

/** The nats-server configuration of one node (NATS conf syntax). */
export function natsConfig(node: NatsNodeConfig): string {
  const routes = node.routes.map((p) => `    "nats-route://127.0.0.1:${p}"`).join('\n');
  return [
    `server_name: "${node.name}"`,
    `listen: "127.0.0.1:${node.clientPort}"`,
    // Large payload batches (a 1,000-message batch is published back to back).
    'max_payload: 8MB',
    'max_pending: 256MB',
    'jetstream {',
    `  store_dir: "${node.storeDir}"`,
    '  max_memory_store: 256MB',
    '  max_file_store: 16GB',
    '}',
    'cluster {',
    `  name: "${node.clusterName}"`,
    `  listen: "127.0.0.1:${node.clusterPort}"`,
    '  routes: [',
    routes,
    '  ]',
    '}',
    '',
  ].join('\n');
}

export class NatsLauncher implements ClusterLauncher {
  readonly name = 'nats' as const;
  readonly binary: string;

  constructor(binary?: string) {
    const found = binary ?? findNatsServer();
    if (found === null) throw new TargetUnavailableError('nats', NATS_INSTALL_HINT);
    this.binary = found;
  }

  async start(shape: ClusterShape): Promise<RunningCluster> {
    // A JetStream cluster needs at least 3 servers; R5 needs 5.
    const nodes = Math.max(3, shape.replicas);
    const dir = mkdtempSync(join(tmpdir(), 'shoal-bench-nats-'));
    const ports = await freePorts(2 * nodes);
    const clientPorts = ports.slice(0, nodes);
    const clusterPorts = ports.slice(nodes);
    const processes: ManagedProcess[] = [];
    const clusterName = `bench-${process.pid}`;
    for (let i = 0; i < nodes; i++) {
      const storeDir = join(dir, `n${i}`);
      mkdirSync(storeDir, { recursive: true });
      const config = natsConfig({
        name: `n${i}`,
        clientPort: clientPorts[i] as number,
        clusterPort: clusterPorts[i] as number,
        storeDir,
        routes: clusterPorts.filter((_, j) => j !== i),
        clusterName,
      });
      const file = join(dir, `n${i}.conf`);
      writeFileSync(file, config);
      processes.push(new ManagedProcess(`nats-server n${i}`, this.binary, ['-c', file]));
    }
    const cluster = new NatsCluster({ replicas: nodes, shards: shape.shards }, processes, clientPorts.map((p) => `127.0.0.1:${p}`), dir);
    try {
      await cluster.waitReady(30_000);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }
}

class NatsCluster extends ProcessCluster {
  constructor(shape: ClusterShape, processes: readonly ManagedProcess[], addresses: readonly string[], dir: string) {
    super(shape, processes, addresses, dir, 5000);
  }

  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown = null;
    while (Date.now() < deadline) {
      for (const p of this.procs) {
        if (!p.alive) throw new Error(`${p.name} exited during start-up:\n${p.output.slice(-2000)}`);
      }
      try {
        const nc = await connect({ servers: [...this.addresses], timeout: 1000, reconnect: false });
        try {
          const jsm = await nc.jetstreamManager({ timeout: 2000 });
          await jsm.getAccountInfo();
          return;
        } finally {
          await nc.close();
        }
      } catch (error) {
        lastError = error;
        await sleep(200);
      }
    }
    throw new Error(`NATS cluster not ready within ${timeoutMs} ms: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
  }
}
