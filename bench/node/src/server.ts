/**
 * Starts the compiled `shoal-server` on ephemeral ports in a fresh data directory and reads the
 * bound addresses from its `ready` log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(root, 'apps/server/bin/shoal-server.cjs');

export interface BenchServer {
  readonly child: ChildProcess;
  readonly host: string;
  readonly port: number;
  /** The metrics endpoint (`http://host:port/metrics`). */
  readonly metricsUrl: string;
  stop(): Promise<void>;
  /** utime + stime of the server process so far, seconds. */
  cpuSeconds(): number;
}

export async function startServer(shards: number, dataRoot: string = tmpdir(), env: Readonly<Record<string, string>> = {}): Promise<BenchServer> {
  if (!existsSync(join(root, 'apps/server/dist/main.js'))) throw new Error('build first: npm run build');
  const dir = mkdtempSync(join(dataRoot, 'shoal-bench-'));
  // SHOAL_BENCH_NODE_ARGS: extra node flags for the server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const nodeArgs = (process.env['SHOAL_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  // The bench logs in as iggy / iggy: passed explicitly (the node otherwise generates a root password).
  const child = spawn(process.execPath, [...nodeArgs, BIN, '--with-default-root-credentials'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      IGGY_TCP_ADDRESS: '127.0.0.1:0',
      IGGY_HTTP_ADDRESS: '127.0.0.1:0',
      IGGY_SYSTEM_PATH: join(dir, 'data'),
      IGGY_SYSTEM_LOGGING_LEVEL: 'warn,runtime::supervisor=info',
      IGGY_SYSTEM_LOGGING_FILE_ENABLED: 'false',
      SHOAL_SYSTEM_SHARDING_SHARDS: String(shards),
      ...env,
    },
  });
  const ready = await new Promise<{ tcp: string; http: string }>((resolve, reject) => {
    let buffered = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        if (line.includes('"msg":"ready"')) resolve(JSON.parse(line) as { tcp: string; http: string });
        else if (line.includes('"level":"error"') || line.includes('"level":"warn"')) process.stderr.write(`server: ${line}\n`);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before ready`)));
  });
  const address = ready.tcp;
  const at = address.lastIndexOf(':');
  const ticks = 100; // _SC_CLK_TCK on Linux
  return {
    child,
    host: address.slice(0, at),
    port: Number(address.slice(at + 1)),
    metricsUrl: `http://${ready.http}/metrics`,
    cpuSeconds(): number {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticks;
    },
    async stop(): Promise<void> {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
