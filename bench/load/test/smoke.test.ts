import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer } from '../../../packages/client/test/support/fake-server.js';
import { EXIT, runBench } from '../src/bench.js';
import { parseFlags } from '../src/flags.js';
import { NATS_INSTALL_HINT, findNatsServer } from '../src/nats/launcher.js';
import { silentProgress } from '../src/progress.js';
import { renderHtml } from '../src/report/html.js';
import { findRun } from '../src/report/model.js';
import { formatReport } from '../src/report/terminal.js';

/**
 * Smoke runs with tiny numbers: the NATS target on a real 3-node JetStream cluster (nats-server
 * from the Debian package), side by side with the Shoal target driven through the SDK and the
 * lean path against the in-test server of packages/client (a real loopback socket speaking the
 * client plane), through the same orchestration `npm run bench` uses.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
// `npm test` installs nats-server first (scripts/test-deps.sh, the pretest step); a missing binary
// is a failure with the install hint, never a silent skip.
const natsBinary = findNatsServer();
const withNats = (name: string, body: () => Promise<void>, timeout?: number): void => {
  it(name, async () => {
    if (natsBinary === null) throw new Error(`bench/load smoke needs nats-server: ${NATS_INSTALL_HINT}`);
    await body();
  }, timeout);
};

let fake: FakeServer;
const log: string[] = [];
const io = { progress: silentProgress, log: (line: string) => log.push(line) };

beforeAll(async () => {
  fake = await FakeServer.start();
});

afterAll(async () => {
  await fake.close();
});

describe('bench smoke', () => {
  it('Shoal target (lean and SDK paths) against a given address: produce, consume, exactly-once', async () => {
    const argv = ['--target', `127.0.0.1:${fake.port}`, '--batch', '1', '--in-flight', '8', '--partitions', '2', '--messages', '200', '--warmup', '0'];
    const report = await runBench(parseFlags(argv), argv, io, { copyBound: null });
    expect(report.exitCode).toBe(EXIT.ok);
    const lean = findRun(report, 'custom', 'shoal', 'lean');
    const sdk = findRun(report, 'custom', 'shoal', 'sdk');
    for (const run of [lean, sdk]) {
      expect(run?.exactlyOnce).toMatchObject({ ok: true, acknowledged: 200, consumed: 200, lost: 0, duplicated: 0 });
      expect(run?.produce?.messages).toBe(200);
      expect(run?.produce?.latency.count).toBe(200);
      expect(run?.consume?.messages).toBe(200);
    }
    // Batches: every partition gets whole requests, offsets placed by the reply's base offset.
    const batched = ['--target', `127.0.0.1:${fake.port}`, '--batch', '50', '--in-flight', '2', '--partitions', '3', '--producers', '2', '--consumers', '2', '--messages', '600', '--warmup', '0'];
    const second = await runBench(parseFlags(batched), batched, io, { copyBound: null });
    expect(second.exitCode).toBe(EXIT.ok);
    expect(findRun(second, 'custom', 'shoal')?.exactlyOnce).toMatchObject({ ok: true, acknowledged: 600, consumed: 600 });
  });

  it('--rate paces requests: never more than the offered load (one request of slack), every message still checked', async () => {
    // 10 messages per request at 200 msg/s = one request every 50 ms: over 1 s at most 21 requests start.
    const argv = ['--target', `127.0.0.1:${fake.port}`, '--batch', '10', '--in-flight', '8', '--rate', '200', '--duration', '1', '--warmup', '0'];
    const report = await runBench(parseFlags(argv), argv, io, { copyBound: null });
    expect(report.exitCode).toBe(EXIT.ok);
    const run = findRun(report, 'custom', 'shoal', 'lean');
    expect(run?.exactlyOnce?.ok).toBe(true);
    expect(run?.exactlyOnce?.sent ?? 0).toBeGreaterThan(0);
    expect(run?.exactlyOnce?.sent ?? Infinity).toBeLessThanOrEqual(210);
  });

  it('a Shoal target that loses an acknowledged message fails the run (exit 1)', async () => {
    const argv = ['--target', `127.0.0.1:${fake.port}`, '--batch', '10', '--in-flight', '1', '--messages', '100', '--warmup', '0'];
    const before = new Set(fake.streams.keys());
    let dropped = false;
    // Once the stream has data, drop the first stored batch: acknowledged but gone.
    const timer = setInterval(() => {
      for (const [id, stream] of fake.streams) {
        if (before.has(id)) continue;
        const partition = [...stream.topics.values()][0]?.partitions[0] as unknown as { batches: unknown[] } | undefined;
        if (!dropped && partition !== undefined && partition.batches.length > 3) {
          partition.batches.splice(1, 1);
          dropped = true;
        }
      }
    }, 1);
    const report = await runBench(parseFlags(argv), argv, io, { copyBound: null, idleMs: 500 }).finally(() => clearInterval(timer));
    expect(dropped).toBe(true);
    expect(report.exitCode).toBe(EXIT.failed);
    const run = report.scenarios[0]?.runs[0];
    expect(run !== undefined && 'exactlyOnce' in run ? run.exactlyOnce : null).toMatchObject({ ok: false, lost: 10 });
  });

  withNats('--compare nats: NATS lean and JetStream-API paths beside Shoal, ratios, reports', async () => {
    const argv = ['--compare', 'nats', '--target', `127.0.0.1:${fake.port}`, '--batch', '1', '--in-flight', '16', '--messages', '300', '--warmup', '0.2'];
    const report = await runBench(parseFlags(argv), argv, io, { copyBound: null });
    expect(report.exitCode, log.join('\n')).toBe(EXIT.ok);
    for (const path of ['lean', 'jetstream-api']) {
      const run = findRun(report, 'custom', 'nats', path);
      expect(run, `nats/${path}`).not.toBeNull();
      expect(run?.exactlyOnce).toMatchObject({ ok: true, lost: 0, duplicated: 0, misplaced: 0, phantom: 0 });
      expect(run?.produce?.messages).toBe(300);
      expect(run?.consume?.messages).toBe(run?.exactlyOnce?.acknowledged);
      expect(run?.produce?.cpu.serverSeconds).not.toBeNull();
    }
    expect(report.systems['nats-3']).toMatchObject({ nodes: 3 });
    expect(report.comparisons.map((c) => c.metric)).toContain('produce msgs/s');
    expect(report.comparisons.every((c) => c.ratio > 0 && Number.isFinite(c.ratio))).toBe(true);
    const text = formatReport(report);
    expect(text).toContain('Shoal / NATS');
    expect(text).toContain('nats/jetstream-api');
    const html = renderHtml(report);
    expect(html).toContain('id="ratios"');
    expect(html).toContain('id="timeline-custom"');
  });

  it('a missing nats-server: the install hint and a non-zero exit', async () => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/load/src/main.ts', '--compare', 'nats'], {
      cwd: root, env: { ...process.env, NATS_SERVER_BIN: '/nonexistent/nats-server' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(EXIT.unavailable);
    expect(stderr).toContain('apt-get install nats-server');
  });
});
