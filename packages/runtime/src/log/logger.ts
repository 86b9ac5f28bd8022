/**
 * Structured JSON logs: one line per event, written synchronously, from any thread.
 *
 * Why our own (about 150 lines) rather than pino: every thread of a node logs (main, metadata
 * worker, shard workers), and a line must survive the thread dying right after it (a fatal log is
 * the last thing a worker does). A synchronous `fs.writeSync` of one whole line to fd 1 does that
 * from any thread without a transport thread, and a line shorter than PIPE_BUF (4 KiB) is never
 * interleaved with another thread's. pino's synchronous destination would do the same, but we need
 * nothing else it offers (serializers, transports, redaction), and a dependency in every worker
 * for `JSON.stringify` + `writeSync` is not worth it. Logging is off the hot path: requests are
 * counted in metrics, never logged one by one.
 *
 * Line shape (keys in this order):
 *   {"time":"2026-11-29T14:00:00.000Z","level":"info","target":"runtime::shard","thread":"shard-1",
 *    "msg":"listening","address":"127.0.0.1:8090"}
 * `bigint` fields are written as decimal strings, `Error`s as `{name, message, stack}`.
 *
 * Levels and filtering follow `system.logging.level` (`RUST_LOG` syntax, docs/configuration.md):
 * a default level plus `target=level` directives matched by prefix, the longest prefix winning.
 */
import { writeSync } from 'node:fs';
import type { LogDirective, LogLevel, LoggingConfig } from '../config/index.js';
import type { LogFile } from './log-file.js';

export type LogFields = Readonly<Record<string, unknown>>;

const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };
type EventLevel = Exclude<LogLevel, 'off'>;

/** Where lines go: stdout always, plus the log file when enabled. */
export interface LogSink {
  write(line: string): void;
}

export class StdoutSink implements LogSink {
  write(line: string): void {
    try {
      writeSync(1, line);
    } catch {
      // stdout closed (EPIPE) or full (EAGAIN on a non-blocking pipe): a lost log line must
      // never take the node down.
    }
  }
}

export class Logger {
  readonly target: string;
  readonly thread: string;
  readonly #threshold: number;
  readonly #filter: LogFilter;
  readonly #sinks: readonly LogSink[];

  constructor(filter: LogFilter, thread: string, target: string, sinks: readonly LogSink[]) {
    this.#filter = filter;
    this.thread = thread;
    this.target = target;
    this.#sinks = sinks;
    this.#threshold = filter.thresholdFor(target);
  }

  /** A logger for a sub-target (`runtime::shard` → `runtime::shard::connection`). */
  child(suffix: string): Logger {
    return new Logger(this.#filter, this.thread, `${this.target}::${suffix}`, this.#sinks);
  }

  enabled(level: EventLevel): boolean {
    return LEVEL_RANK[level] >= this.#threshold;
  }

  trace(msg: string, fields?: LogFields): void { this.#log('trace', msg, fields); }
  debug(msg: string, fields?: LogFields): void { this.#log('debug', msg, fields); }
  info(msg: string, fields?: LogFields): void { this.#log('info', msg, fields); }
  warn(msg: string, fields?: LogFields): void { this.#log('warn', msg, fields); }
  error(msg: string, fields?: LogFields): void { this.#log('error', msg, fields); }

  #log(level: EventLevel, msg: string, fields: LogFields | undefined): void {
    if (LEVEL_RANK[level] < this.#threshold) return;
    const line = formatLine(level, this.target, this.thread, msg, fields);
    for (const sink of this.#sinks) sink.write(line);
  }
}

/** `system.logging.level` resolved: the default threshold and the prefix directives. */
export class LogFilter {
  readonly #defaultRank: number;
  readonly #directives: readonly LogDirective[];

  constructor(defaultLevel: LogLevel, directives: readonly LogDirective[]) {
    this.#defaultRank = LEVEL_RANK[defaultLevel];
    // Longest target first, so the most specific directive wins.
    this.#directives = [...directives].sort((a, b) => b.target.length - a.target.length);
  }

  static of(logging: Pick<LoggingConfig, 'defaultLevel' | 'directives'>): LogFilter {
    return new LogFilter(logging.defaultLevel, logging.directives);
  }

  thresholdFor(target: string): number {
    for (const directive of this.#directives) {
      if (target === directive.target || target.startsWith(`${directive.target}::`)) return LEVEL_RANK[directive.level];
    }
    return this.#defaultRank;
  }
}

export interface LoggerOptions {
  readonly logging: Pick<LoggingConfig, 'defaultLevel' | 'directives'>;
  readonly thread: string;
  readonly target: string;
  /** Also append to this file (system.logging.file_enabled). */
  readonly file?: LogFile | null;
  /** Tests: capture lines instead of writing stdout. */
  readonly sinks?: readonly LogSink[];
}

export function createLogger(options: LoggerOptions): Logger {
  const sinks: LogSink[] = options.sinks !== undefined ? [...options.sinks] : [new StdoutSink()];
  if (options.file !== undefined && options.file !== null) sinks.push(options.file);
  return new Logger(LogFilter.of(options.logging), options.thread, options.target, sinks);
}

export function formatLine(level: EventLevel, target: string, thread: string, msg: string, fields: LogFields | undefined): string {
  const record: Record<string, unknown> = { time: new Date().toISOString(), level, target, thread, msg };
  if (fields !== undefined) {
    for (const [key, value] of Object.entries(fields)) {
      if (!(key in record)) record[key] = value;
    }
  }
  return `${JSON.stringify(record, replacer)}\n`;
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return value;
}
