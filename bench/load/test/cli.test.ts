import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createProgress, renderBar } from '../src/progress.js';

/** `shoal bench` spawns the same entry as `npm run bench`; the progress display for TTYs and pipes. */
const root = fileURLToPath(new URL('../../../', import.meta.url));

function run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'apps/cli/src/bin.ts', ...args], { cwd: root });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('shoal bench', () => {
  it('passes every flag through: --help, and a usage error exits 2 with the bench message', async () => {
    const [help, usage] = await Promise.all([run(['bench', '--help']), run(['bench', '--replicas', '3', '--batch', 'ten'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npm run bench -- [flags]');
    expect(help.stdout).toContain('--compare nats');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--batch: expected a whole number, got 'ten'");
  });
});

describe('progress', () => {
  it('bar rendering', () => {
    expect(renderBar(0, 10)).toBe('[░░░░░░░░░░]   0%');
    expect(renderBar(0.5, 10)).toBe('[█████░░░░░]  50%');
    expect(renderBar(2, 10)).toBe('[██████████] 100%');
    expect(renderBar(null, 4)).toBe('[····]');
  });

  it('a TTY gets one redrawn line, a pipe plain lines at most every 5 s per phase', () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 200 }) as unknown as NodeJS.WriteStream;
    let ttyOut = '';
    (tty as unknown as PassThrough).on('data', (c: Buffer) => {
      ttyOut += c.toString();
    });
    const p = createProgress(tty);
    p.update({ label: 'x', phase: 'produce', fraction: 0.25, detail: '10 msg/s' });
    p.log('hello');
    p.done();
    expect(ttyOut).toContain('\r\x1b[2K');
    expect(ttyOut).toContain('hello\n');
    expect(ttyOut).toContain(' 25%');

    const pipe = new PassThrough() as unknown as NodeJS.WriteStream;
    let pipeOut = '';
    (pipe as unknown as PassThrough).on('data', (c: Buffer) => {
      pipeOut += c.toString();
    });
    let now = 0;
    const plain = createProgress(pipe, () => now);
    plain.update({ label: 'x', phase: 'produce', fraction: 0.1, detail: 'a' });
    now = 1000;
    plain.update({ label: 'x', phase: 'produce', fraction: 0.2, detail: 'b' });
    now = 6000;
    plain.update({ label: 'x', phase: 'produce', fraction: 0.3, detail: 'c' });
    plain.update({ label: 'x', phase: 'consume', fraction: 0, detail: 'd' });
    expect(pipeOut).toBe('x  produce 10%  a\nx  produce 30%  c\nx  consume 0%  d\n');
    expect(pipeOut).not.toContain('\r');
  });
});
