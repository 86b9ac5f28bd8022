import { commandByCode } from '@shoal/protocol';
import type { ShoalError } from './errors.js';

/**
 * What the client does on its own, as events: connections opening, dropping and being re-dialled,
 * same-connection replays of a 57, router retries and redirects, evictions, leader changes, and
 * calls that give up. Subscribe with `client.on(type, listener)` (or `'*'` for all), or pass a
 * `logger` (console, or anything with debug/info/warn/error methods) to ClientOptions and every
 * event is logged at its level.
 *
 *   client.on('reconnecting', (e) => metrics.reconnects.inc({ node: e.node }));
 *   new ShoalClient({ url, logger: console });
 *
 * Listeners run synchronously where the event happens and must not throw (an exception is
 * reported to the logger's `error` and otherwise ignored, so a listener can never break a call).
 * No clocks and no I/O here: events carry what the router and the transport already know.
 */
export type ClientEvent =
  /** A connection to `node` opened (and logged in when credentials are set); `reconnect` after a loss. */
  | { readonly type: 'connected'; readonly node: string; readonly reconnect: boolean; readonly attempts: number }
  /** An open connection was lost (`error` null: the server closed it cleanly). */
  | { readonly type: 'disconnected'; readonly node: string; readonly error: ShoalError | null }
  /** A dial attempt of a connection that was open before (`attempt` 1-based, of `attemptsMax`). */
  | { readonly type: 'reconnecting'; readonly node: string; readonly attempt: number; readonly attemptsMax: number; readonly delayMs: number }
  /** Every re-dial attempt failed; the next request dials again. */
  | { readonly type: 'reconnect_failed'; readonly node: string; readonly attempts: number; readonly error: ShoalError }
  /** The server answered 57 TransientNotCommitted: the identical frame is written again on the same connection. */
  | { readonly type: 'replay'; readonly node: string; readonly command: string; readonly attempt: number; readonly delayMs: number }
  /** The server evicted this client's session (the next request registers afresh). */
  | { readonly type: 'evicted'; readonly node: string; readonly error: ShoalError }
  /** A retriable failure: the call is tried again after `delayMs` (`attempt` = the attempt that failed). */
  | { readonly type: 'retry'; readonly command: string; readonly node: string; readonly attempt: number; readonly delayMs: number; readonly error: ShoalError }
  /** The next attempt of a call goes to another node (leader or partition primary moved, node down). */
  | { readonly type: 'redirect'; readonly command: string; readonly from: string; readonly to: string; readonly redirects: number }
  /** The cluster's metadata leader changed (null: none known, a view change is under way). */
  | { readonly type: 'leader_changed'; readonly from: string | null; readonly to: string | null }
  /** A call stopped retrying (attempts, time budget, redirects or no leader) and fails with `error`. */
  | { readonly type: 'gave_up'; readonly command: string; readonly reason: string; readonly attempts: number; readonly error: ShoalError };

export type ClientEventType = ClientEvent['type'];
export type ClientEventOf<T extends ClientEventType> = Extract<ClientEvent, { readonly type: T }>;

type LogMethod = (message: string, fields: Readonly<Record<string, unknown>>) => void;

/** console fits; for pino-style `(fields, message)` loggers wrap: `{ warn: (m, f) => log.warn(f, m) }`. */
export interface ShoalLogger {
  readonly debug?: LogMethod;
  readonly info?: LogMethod;
  readonly warn?: LogMethod;
  readonly error?: LogMethod;
}

export const EVENT_LEVELS: Readonly<Record<ClientEventType, keyof ShoalLogger>> = {
  connected: 'info',
  disconnected: 'warn',
  reconnecting: 'warn',
  reconnect_failed: 'error',
  replay: 'debug',
  evicted: 'warn',
  retry: 'info',
  redirect: 'info',
  leader_changed: 'info',
  gave_up: 'error',
};

/** The command's name as commands.mdx spells it (`SEND_MESSAGES`), for events and logs. */
export function commandName(code: number): string {
  return commandByCode(code)?.name ?? `command ${code}`;
}

/** One line a person can read. */
export function describeEvent(event: ClientEvent): string {
  switch (event.type) {
    case 'connected': return `shoal: ${event.reconnect ? 'reconnected' : 'connected'} to ${event.node}${event.attempts > 1 ? ` after ${event.attempts} attempts` : ''}`;
    case 'disconnected': return `shoal: connection to ${event.node} lost${event.error === null ? '' : `: ${event.error.message}`}`;
    case 'reconnecting': return `shoal: reconnecting to ${event.node} (attempt ${event.attempt} of ${event.attemptsMax === Number.POSITIVE_INFINITY ? 'unlimited' : event.attemptsMax})`;
    case 'reconnect_failed': return `shoal: cannot reconnect to ${event.node} after ${event.attempts} attempts: ${event.error.message}`;
    case 'replay': return `shoal: ${event.command} not committed yet on ${event.node}; replaying (attempt ${event.attempt})`;
    case 'evicted': return `shoal: session on ${event.node} evicted: ${event.error.message}`;
    case 'retry': return `shoal: ${event.command} failed on ${event.node} (${event.error.message}); retrying in ${Math.round(event.delayMs)} ms`;
    case 'redirect': return `shoal: ${event.command} redirected from ${event.from} to ${event.to}`;
    case 'leader_changed': return `shoal: cluster leader ${event.from ?? 'none'} -> ${event.to ?? 'none'}`;
    case 'gave_up': return `shoal: ${event.command} gave up (${event.reason}) after ${event.attempts} attempt(s): ${event.error.message}`;
  }
}

type Listener = (event: ClientEvent) => void;

/** The client's event hub: listeners per type and the optional logger. */
export class ClientEvents {
  readonly #listeners = new Map<ClientEventType | '*', Set<Listener>>();
  readonly #logger: ShoalLogger | null;

  constructor(logger: ShoalLogger | null = null) {
    this.#logger = logger;
  }

  on<T extends ClientEventType>(type: T, listener: (event: ClientEventOf<T>) => void): () => void;
  on(type: '*', listener: (event: ClientEvent) => void): () => void;
  on(type: ClientEventType | '*', listener: Listener): () => void {
    let set = this.#listeners.get(type);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** True when someone listens (lets callers skip building an event nobody reads). */
  get wanted(): boolean {
    return this.#logger !== null || [...this.#listeners.values()].some((s) => s.size > 0);
  }

  emit(event: ClientEvent): void {
    const log = this.#logger?.[EVENT_LEVELS[event.type]];
    if (log !== undefined) this.#safely(() => log.call(this.#logger, describeEvent(event), fields(event)));
    for (const key of [event.type, '*'] as const) {
      const set = this.#listeners.get(key);
      if (set !== undefined) for (const listener of [...set]) this.#safely(() => listener(event));
    }
  }

  #safely(run: () => void): void {
    try {
      run();
    } catch (error) {
      try {
        this.#logger?.error?.call(this.#logger, 'shoal: an event listener threw', { error });
      } catch {
        // a throwing logger too: nothing left to tell
      }
    }
  }
}

/** The event as log fields (errors by name, code and message). */
function fields(event: ClientEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    out[key] = value !== null && typeof value === 'object' && 'code' in value && value instanceof Error
      ? { name: value.name, code: (value as ShoalError).code, message: value.message }
      : value;
  }
  return out;
}
