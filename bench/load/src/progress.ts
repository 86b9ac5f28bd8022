/**
 * Progress while a run goes: on a TTY one line redrawn in place (a bar, the phase, the current
 * rate); otherwise plain lines (one when a phase starts, then at most one every 5 s), so logs of
 * CI and pipes stay readable.
 */
export interface ProgressState {
  /** What runs: "r3-batch-1000 · shoal/lean". */
  readonly label: string;
  readonly phase: string;
  /** 0..1, or null when unknown. */
  readonly fraction: number | null;
  /** Free text after the bar (rate, counts). */
  readonly detail: string;
}

export interface Progress {
  update(state: ProgressState): void;
  /** Prints a line above the bar (the bar is redrawn after it). */
  log(line: string): void;
  /** Clears the bar. */
  done(): void;
}

const BAR_WIDTH = 24;
const PLAIN_INTERVAL_MS = 5000;

export function createProgress(stream: NodeJS.WriteStream = process.stderr, now: () => number = () => Date.now()): Progress {
  return stream.isTTY === true ? new TtyProgress(stream) : new PlainProgress(stream, now);
}

export function renderBar(fraction: number | null, width = BAR_WIDTH): string {
  if (fraction === null) return `[${'·'.repeat(width)}]`;
  const f = Math.max(0, Math.min(1, fraction));
  const full = Math.floor(f * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}] ${String(Math.floor(f * 100)).padStart(3)}%`;
}

class TtyProgress implements Progress {
  readonly #stream: NodeJS.WriteStream;
  #last: ProgressState | null = null;

  constructor(stream: NodeJS.WriteStream) {
    this.#stream = stream;
  }

  #line(state: ProgressState): string {
    const text = `${state.label}  ${state.phase.padEnd(8)} ${renderBar(state.fraction)}  ${state.detail}`;
    const columns = this.#stream.columns ?? 120;
    return text.length >= columns ? text.slice(0, columns - 1) : text;
  }

  update(state: ProgressState): void {
    this.#last = state;
    this.#stream.write(`\r\x1b[2K${this.#line(state)}`);
  }

  log(line: string): void {
    this.#stream.write(`\r\x1b[2K${line}\n`);
    if (this.#last !== null) this.#stream.write(this.#line(this.#last));
  }

  done(): void {
    this.#last = null;
    this.#stream.write('\r\x1b[2K');
  }
}

class PlainProgress implements Progress {
  readonly #stream: NodeJS.WriteStream;
  readonly #now: () => number;
  #key = '';
  #printedAt = 0;

  constructor(stream: NodeJS.WriteStream, now: () => number) {
    this.#stream = stream;
    this.#now = now;
  }

  update(state: ProgressState): void {
    const key = `${state.label}|${state.phase}`;
    const t = this.#now();
    if (key === this.#key && t - this.#printedAt < PLAIN_INTERVAL_MS) return;
    this.#key = key;
    this.#printedAt = t;
    const pct = state.fraction === null ? '' : ` ${Math.floor(Math.max(0, Math.min(1, state.fraction)) * 100)}%`;
    this.#stream.write(`${state.label}  ${state.phase}${pct}  ${state.detail}\n`);
  }

  log(line: string): void {
    this.#stream.write(`${line}\n`);
  }

  done(): void {
    this.#key = '';
  }
}

/** A progress that prints nothing (tests, --json-only callers). */
export const silentProgress: Progress = { update: () => undefined, log: () => undefined, done: () => undefined };
