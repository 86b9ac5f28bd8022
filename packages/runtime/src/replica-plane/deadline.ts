/**
 * One time budget per connection attempt: `message_bus.handshake_grace` covers connect (dialer),
 * TLS and the replica handshake together (replication-semantics.md §3.9). On expiry every
 * registered callback runs once (they close the socket); `cancel` disarms it once the link is up.
 */
export class Deadline {
  readonly #timer: NodeJS.Timeout;
  readonly #callbacks: (() => void)[] = [];
  #expired = false;
  #cancelled = false;

  constructor(ms: number) {
    this.#timer = setTimeout(() => this.#expire(), ms);
    this.#timer.unref();
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Runs `callback` on expiry (at once when already expired). */
  onExpire(callback: () => void): void {
    if (this.#expired) callback();
    else if (!this.#cancelled) this.#callbacks.push(callback);
  }

  cancel(): void {
    this.#cancelled = true;
    this.#callbacks.length = 0;
    clearTimeout(this.#timer);
  }

  #expire(): void {
    if (this.#cancelled) return;
    this.#expired = true;
    for (const callback of this.#callbacks.splice(0)) callback();
  }
}
