import { Command, CommanderError, Option } from 'commander';
import { ShoalClient, ShoalError, ShoalInvalidArgumentError, asShoalError } from '@shoal/client';
import type { Action, CliIo, Context, Leaf, LocalAction, LocalLeaf } from './action.js';
import { type GlobalOptions, openClient, resolveTarget } from './target.js';
import { OUTPUT_FORMATS, type OutputFormat, createOutput, stringify, toYaml } from './output.js';
import { registerCommands } from './commands.js';
import { registerContexts } from './context-commands.js';
import { registerCompletion } from './completion.js';
import { registerBench } from './bench.js';
import { StdinReader } from './stdin.js';

export type { Action, CliIo, Context, Leaf, LocalAction, LocalContext, LocalLeaf } from './action.js';

/**
 * `shoal`: the command-line client. Commands and flags mirror the reference `iggy` CLI
 * (ecosystem/cli-commands.mdx) for the subset Shoal needs; output is a table (or key/value list)
 * for humans, JSON with `--output json` / `--json`, YAML with `--output yaml`. Exit code 0 on
 * success, 1 on any error (the message on stderr; an error object in JSON / YAML mode), 2 on a
 * usage error.
 *
 * Built on `commander` (well kept, no dependencies, no install scripts): subcommands with aliases,
 * positional options (global flags before the command, command flags after it), generated help.
 */
const outputOption = (flags: string): Option => new Option(flags, 'output format').choices(OUTPUT_FORMATS);

const COMMON_FLAGS: readonly [string, string][] = [
  ['--json', 'same as --output json'],
  ['-q, --quiet', 'print nothing on success'],
  ['--url <connection-string>', 'iggy://user:password@host:port'],
  ['--tcp-server-address <host:port>', 'server address (default 127.0.0.1:8090)'],
  ['--tcp-tls-enabled', 'connect over TLS (certificate and host name checked; or tls=true in --url)'],
  ['--tcp-tls-domain <name>', 'name the server certificate must carry (default: the host)'],
  ['--tcp-tls-ca-file <file>', 'PEM CA certificate(s) to trust instead of the system roots'],
  ['--username <name>', 'user name (or IGGY_USERNAME)'],
  ['--password <password>', 'password (or IGGY_PASSWORD)'],
  ['--token <token>', 'personal access token'],
  ['--timeout <duration>', 'request timeout (default 10s)'],
];

export function buildProgram(io: CliIo, exit: { code: number }): Command {
  const program = new Command('shoal')
    .description('command-line client for Shoal (Apache Iggy binary protocol 0.11.0)')
    .version('0.1.0')
    .enablePositionalOptions()
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .option('-u, --username <name>', 'user name (or IGGY_USERNAME)')
    .option('-p, --password <password>', 'password (or IGGY_PASSWORD)')
    .option('-t, --token <token>', 'personal access token')
    .addOption(outputOption('-o, --output <format>'));
  for (const [flags, description] of COMMON_FLAGS) {
    if (!flags.startsWith('--username') && !flags.startsWith('--password') && !flags.startsWith('--token')) program.option(flags, description);
  }
  const stdin = new StdinReader(io.stdin);

  /** Adds the common flags to a leaf command and wraps its action. */
  const wrap = (command: Command, run: (options: GlobalOptions, args: unknown[]) => Promise<number>): Command => {
    for (const [flags, description] of COMMON_FLAGS) command.option(flags, description);
    command.addOption(outputOption('--output <format>'));
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    return command.action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const options = { ...program.opts(), ...cmd.opts() } as GlobalOptions;
      exit.code = await run(options, args.slice(0, -1));
    });
  };
  const leaf: Leaf = (command, action) => wrap(command, (options, args) => execute(io, stdin, options, action, args));
  const localLeaf: LocalLeaf = (command, action) => wrap(command, (options, args) => executeLocal(io, stdin, options, action, args));
  registerCommands(program, leaf);
  registerContexts(program, localLeaf);
  registerCompletion(program, localLeaf);
  registerBench(program, { stderr: io.stderr, env: io.env }, exit);
  return program;
}

export function outputFormat(options: GlobalOptions): OutputFormat {
  const chosen = options.output as OutputFormat | undefined;
  if (options.json === true && chosen !== undefined && chosen !== 'json') throw new ShoalInvalidArgumentError(`--json and --output ${chosen} contradict each other`);
  return chosen ?? (options.json === true ? 'json' : 'table');
}

async function executeLocal(io: CliIo, stdin: StdinReader, options: GlobalOptions, action: LocalAction, args: unknown[]): Promise<number> {
  try {
    const out = createOutput({ out: io.stdout }, outputFormat(options), options.quiet === true);
    await action({ out, options, io, stdin }, ...args);
    return 0;
  } catch (thrown) {
    reportError(io, options, thrown);
    return 1;
  }
}

async function execute(io: CliIo, stdin: StdinReader, options: GlobalOptions, action: Action, args: unknown[]): Promise<number> {
  const opened: ShoalClient[] = [];
  let main: ShoalClient | null = null;
  try {
    const out = createOutput({ out: io.stdout }, outputFormat(options), options.quiet === true);
    const target = await resolveTarget(options, io.env, { stdin, ...(io.promptOutput === undefined ? {} : { output: io.promptOutput }) });
    const ctx: Context = {
      out, options, io, stdin, target,
      client: () => {
        if (main === null) {
          main = openClient(target);
          opened.push(main);
        }
        return main;
      },
      anonymousClient: () => {
        const client = openClient(target, false);
        opened.push(client);
        return client;
      },
    };
    await action(ctx, ...args);
    return 0;
  } catch (thrown) {
    reportError(io, options, thrown);
    return 1;
  } finally {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  }
}

function reportError(io: CliIo, options: GlobalOptions, thrown: unknown): void {
  const error = asShoalError(thrown);
  let format: OutputFormat = 'table';
  try {
    format = outputFormat(options);
  } catch {
    // contradicting flags: report in plain text
  }
  if (format !== 'table') {
    const value = { error: { name: error.name, code: error.code, codeName: error.codeName, retriable: error.retriable, message: error.message } };
    io.stderr(`${format === 'yaml' ? toYaml(value) : stringify(value)}\n`);
    return;
  }
  const code = error instanceof ShoalError && error.codeName !== null ? ` [${error.codeName} ${error.code}]` : '';
  io.stderr(`error: ${error.message}${code}\n`);
}

/** Runs the CLI; resolves with the exit code. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const exit = { code: 0 };
  const program = buildProgram(io, exit);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exit.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return error.exitCode === 0 ? 0 : 2;
    }
    reportError(io, {}, error);
    return 1;
  }
}

/** The `shoal` binary: process I/O, signals, exit code. */
export async function runFromProcess(): Promise<void> {
  let interrupt: () => void = () => undefined;
  const interrupted = new Promise<void>((resolve) => {
    interrupt = resolve;
  });
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const code = await run(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stdin: process.stdin,
    promptOutput: process.stderr,
    interrupted,
  });
  process.removeListener('SIGINT', interrupt);
  process.removeListener('SIGTERM', interrupt);
  process.exitCode = code;
}
