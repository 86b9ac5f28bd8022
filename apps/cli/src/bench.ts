import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';

/**
 * `shoal bench [flags]`: runs the load benchmark (bench/load) as a child process with the same
 * flags as `npm run bench -- [flags]`, its output and exit code passed through. The CLI does not
 * import the bench (apps/cli may not depend on bench/); it spawns the same entry the root script
 * runs, `node --conditions=source --import tsx bench/load/src/main.ts`.
 */
export const BENCH_ENTRY = fileURLToPath(new URL('../../../bench/load/src/main.ts', import.meta.url));

export interface BenchIo {
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The node arguments that run the bench entry with these flags. */
export function benchCommand(flags: readonly string[]): readonly string[] {
  // Resolved here (not by name) so the loader is found whatever the caller's working directory.
  const tsx = import.meta.resolve('tsx');
  return ['--conditions=source', '--import', tsx, BENCH_ENTRY, ...flags];
}

export function spawnBench(flags: readonly string[], io: BenchIo): Promise<number> {
  if (!existsSync(BENCH_ENTRY)) {
    io.stderr(`error: the load benchmark is not here (${BENCH_ENTRY}); run it from a Shoal checkout\n`);
    return Promise.resolve(1);
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...benchCommand(flags)], { stdio: 'inherit', env: { ...io.env } });
    child.once('error', (error) => {
      io.stderr(`error: cannot start the benchmark: ${error.message}\n`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 1)));
  });
}

/** Registers `bench`: every token after it goes to the benchmark unparsed (its own --help included). */
export function registerBench(program: Command, io: BenchIo, exit: { code: number }): void {
  program
    .command('bench')
    .description('run the load benchmark (same flags as `npm run bench`; `shoal bench --help` lists them)')
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .passThroughOptions(true)
    .argument('[flags...]', 'benchmark flags')
    .action(async (flags: string[]) => {
      exit.code = await spawnBench(flags, io);
    });
}
