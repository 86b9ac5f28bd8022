import { Command, CommanderError } from 'commander';
import { ShoalClient, ShoalError, asShoalError } from '@shoal/client';
import { type Env, type GlobalOptions, type Target, openClient, resolveTarget } from './context.js';
import { type Output, createOutput, stringify } from './output.js';
import { registerCommands } from './commands.js';
import { registerBench } from './bench.js';

/**
 * `shoal`: the command-line client. Commands and flags mirror the reference `iggy` CLI
 * (ecosystem/cli-commands.mdx) for the subset Shoal needs; output is a table (or key/value list)
 * for humans and JSON with `--json`. Exit code 0 on success, 1 on any error (the message on
 * stderr; a JSON error object with `--json`), 2 on a usage error.
 *
 * Built on `commander` (well kept, no dependencies, no install scripts): subcommands with aliases,
 * positional options (global flags before the command, command flags after it), generated help.
 */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Env;
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  /** Resolves when the user interrupts (SIGINT / SIGTERM): stops `--follow`. */
  readonly interrupted: Promise<void>;
}

/** What an action gets: output, resolved options and a client opened on first use. */
export interface Context {
  readonly out: Output;
  readonly options: GlobalOptions;
  readonly io: CliIo;
  readonly target: Target;
  /** The client, logged in with the resolved credentials (opened lazily, closed after the action). */
  client(): ShoalClient;
  /** A client without credentials (login / logout manage their own). */
  anonymousClient(): ShoalClient;
}

export type Action = (ctx: Context, ...args: unknown[]) => Promise<void>;

const COMMON_FLAGS: readonly [string, string][] = [
  ['--json', 'print JSON instead of tables'],
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
    .option('-t, --token <token>', 'personal access token');
  for (const [flags, description] of COMMON_FLAGS) {
    if (!flags.startsWith('--username') && !flags.startsWith('--password') && !flags.startsWith('--token')) program.option(flags, description);
  }

  /** Adds the common flags to a leaf command and wraps its action. */
  const leaf = (command: Command, action: Action): Command => {
    for (const [flags, description] of COMMON_FLAGS) command.option(flags, description);
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    return command.action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const options = { ...program.opts(), ...cmd.opts() } as GlobalOptions;
      exit.code = await execute(io, options, action, args.slice(0, -1));
    });
  };
  registerCommands(program, leaf);
  registerBench(program, { stderr: io.stderr, env: io.env }, exit);
  return program;
}

async function execute(io: CliIo, options: GlobalOptions, action: Action, args: unknown[]): Promise<number> {
  const out = createOutput({ out: io.stdout }, options.json === true, options.quiet === true);
  const opened: ShoalClient[] = [];
  let main: ShoalClient | null = null;
  try {
    const target = resolveTarget(options, io.env);
    const ctx: Context = {
      out, options, io, target,
      client: () => {
        if (main === null) {
          main = openClient(target, options);
          opened.push(main);
        }
        return main;
      },
      anonymousClient: () => {
        const client = openClient(target, options, false);
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
  if (options.json === true) {
    io.stderr(`${stringify({ error: { name: error.name, code: error.code, codeName: error.codeName, retriable: error.retriable, message: error.message } })}\n`);
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
    interrupted,
  });
  process.removeListener('SIGINT', interrupt);
  process.removeListener('SIGTERM', interrupt);
  process.exitCode = code;
}
