/**
 * A bare TCP client for the Iggy binary protocol: write exact bytes, read whole server frames
 * (FrameDecoder), observe the close. For golden-frame replay and hostile-client tests.
 */
import { Socket, connect } from 'node:net';
import { FrameDecoder } from '@shoal/protocol';
import type { Endpoint } from './server.js';

export class RawClient {
  readonly socket: Socket;
  readonly #decoder = new FrameDecoder({ frameSizeMax: 128 * 1024 * 1024 });
  readonly #frames: Uint8Array[] = [];
  readonly #waiters: ((frame: Uint8Array | null) => void)[] = [];
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.closedPromise = new Promise((resolve) => socket.once('close', () => {
      this.closed = true;
      for (const waiter of this.#waiters.splice(0)) waiter(null);
      resolve();
    }));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      this.#decoder.push(chunk);
      for (let f = this.#decoder.pull(); f !== null; f = this.#decoder.pull()) {
        const frame = f.slice();
        const waiter = this.#waiters.shift();
        if (waiter !== undefined) waiter(frame);
        else this.#frames.push(frame);
      }
    });
  }

  static connect(endpoint: Endpoint): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: endpoint.host, port: endpoint.port, noDelay: true });
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The next server frame, or null when the connection closed first. */
  next(timeoutMs = 10_000): Promise<Uint8Array | null> {
    const ready = this.#frames.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no frame in time')), timeoutMs);
      this.#waiters.push((frame) => {
        clearTimeout(timer);
        resolve(frame);
      });
    });
  }

  async request(frame: Uint8Array, timeoutMs?: number): Promise<Uint8Array | null> {
    this.write(frame);
    return this.next(timeoutMs);
  }

  /** Resolves true if the server closes the connection within `timeoutMs`. */
  async closedWithin(timeoutMs: number): Promise<boolean> {
    if (this.closed) return true;
    return Promise.race([this.closedPromise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs))]);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
