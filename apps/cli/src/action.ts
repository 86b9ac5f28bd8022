import type { Command } from 'commander';
import type { ShoalClient } from '@shoal/client';
import type { Env } from './home.js';
import type { Output } from './output.js';
import type { InputStream, StdinReader } from './stdin.js';
import type { GlobalOptions, Target } from './target.js';

/**
 * What a command's action gets and how commands are registered: the program (main.ts) builds
 * these, the command modules (commands.ts, context-commands.ts, completion.ts) use them.
 */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Env;
  readonly stdin: InputStream;
  /** Where a terminal password prompt is written (the process's stderr stream). */
  readonly promptOutput?: NodeJS.WritableStream;
  /** Resolves when the user interrupts (SIGINT / SIGTERM): stops `--follow`. */
  readonly interrupted: Promise<void>;
}

/** What a command that does not talk to a server gets. */
export interface LocalContext {
  readonly out: Output;
  readonly options: GlobalOptions;
  readonly io: CliIo;
  /** Standard input, shared (the password prompt may have taken its first line). */
  readonly stdin: StdinReader;
}

/** What an action gets: output, resolved options and a client opened on first use. */
export interface Context extends LocalContext {
  readonly target: Target;
  /** The client, logged in with the resolved credentials (opened lazily, closed after the action). */
  client(): ShoalClient;
  /** A client without credentials (login / logout manage their own). */
  anonymousClient(): ShoalClient;
}

export type Action = (ctx: Context, ...args: unknown[]) => Promise<void>;
export type LocalAction = (ctx: LocalContext, ...args: unknown[]) => Promise<void>;
export type Leaf = (command: Command, action: Action) => Command;
export type LocalLeaf = (command: Command, action: LocalAction) => Command;
