import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer } from '../../../packages/client/test/support/fake-server.js';

/**
 * The `shoal` binary as a child process against the in-test server: argv, stdin, stdout, stderr,
 * exit codes and signals. It runs the built bin (apps/cli/bin/shoal.js → dist) when dist is newer
 * than the sources, and the sources through tsx otherwise, so the current code is what runs.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const cliDir = join(root, 'apps/cli');

function newest(dir: string): number {
  return readdirSync(dir).reduce((max, name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return Math.max(max, stat.isDirectory() ? newest(path) : stat.mtimeMs);
  }, 0);
}

function fresh(pkg: string, built: string): boolean {
  const file = join(root, pkg, built);
  return existsSync(file) && statSync(file).mtimeMs >= newest(join(root, pkg, 'src'));
}

const ENTRY = fresh('apps/cli', 'dist/main.js') && fresh('packages/client', 'dist/index.js')
  ? [join(cliDir, 'bin/shoal.js')]
  : ['--conditions=source', '--import', 'tsx', join(cliDir, 'src/bin.ts')];

interface Result {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

let server: FakeServer;
let home: string;

function shoal(args: readonly string[], options: { env?: Record<string, string>; stdin?: string; onStdout?: (text: string, kill: () => void) => void } = {}): Promise<Result> {
  const env = { PATH: process.env['PATH'] ?? '', SHOAL_HOME: home, IGGY_USERNAME: 'iggy', IGGY_PASSWORD: 'iggy', ...options.env };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...ENTRY, '--tcp-server-address', server.address, ...args], { env, cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onStdout?.(stdout, () => child.kill('SIGINT'));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

beforeAll(async () => {
  server = await FakeServer.start();
  server.addStream('app', [['events', 1]]);
  home = mkdtempSync(join(tmpdir(), 'shoal-bin-'));
});

afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
});

describe('the shoal binary', () => {
  it('human output, JSON output, stdin input', async () => {
    const [ping, streams, sent] = await Promise.all([
      shoal(['ping']),
      shoal(['stream', 'list', '--json']),
      shoal(['message', 'send', '-p', '0', 'app', 'events'], { stdin: 'a\nb\n' }),
    ]);
    expect(ping).toMatchObject({ code: 0, stderr: '' });
    expect(ping.stdout).toMatch(/^ping 127\.0\.0\.1:\d+: \d+\.\d+ ms\n$/);
    expect(streams.code).toBe(0);
    expect((JSON.parse(streams.stdout) as { name: string }[]).map((s) => s.name)).toEqual(['app']);
    expect(sent).toMatchObject({ code: 0, stdout: 'sent 2 message(s) to partition 0 starting at offset 0\n' });
  });

  it('poll --follow runs until Ctrl-C and exits 0', async () => {
    const result = await shoal(['message', 'poll', '--first', '--follow', 'app', 'events', '0'], {
      onStdout: (text, kill) => {
        if (text.includes('payload=b')) kill();
      },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/offset=0 .*payload=a\noffset=1 .*payload=b\n/);
  });

  it('exit codes: 1 for failures (message on stderr), 2 for usage errors', async () => {
    const [denied, usage] = await Promise.all([
      shoal(['stream', 'list'], { env: { IGGY_PASSWORD: 'wrong' } }),
      shoal(['stream', 'create']),
    ]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('[InvalidCredentials 42]');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'name'");
  });
});
