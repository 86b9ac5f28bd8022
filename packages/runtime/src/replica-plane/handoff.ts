/**
 * Moving an established PLAINTEXT replica connection to another thread by its fd
 * (shared/design/node-runtime-notes.md "Handing a TCP socket from one thread to another").
 *
 *   acceptor thread                                    worker thread
 *   ───────────────                                    ─────────────
 *   handshake done (socket paused)
 *   detachForHandOff(socket, leftover)
 *     readStop, drain the stream's buffer into
 *     leftover, park the socket object forever
 *   postMessage({ fd, leftover }, [leftover.buffer]) ─▶ adoptHandedOff(pkg)
 *                                                       new net.Socket({ fd }), leftover first
 *                                                       new PeerConnection({ socket, leftover })
 *
 * Rules:
 * - Bytes already read past ReplicaFinish (or past the Hello with auth off) travel with the fd,
 *   in order: the handshake's leftover, then whatever the stream had buffered. The peer may
 *   pipeline its first consensus frames right behind the handshake.
 * - Node has no dup(2): after the hand-off two libuv handles name the same fd. The worker's
 *   handle owns it. The acceptor's handle is NEVER closed or destroyed (once the worker closes
 *   the fd its number is reused, and closing the stale handle would close an unrelated socket),
 *   so it is parked in a module-level list for the life of the process: about 1 KiB of heap per
 *   hand-off (measured 0.95 KiB). Replica connections are a handful per peer lifetime, so this
 *   is fine; client connections must NOT use hand-off (they use a shared listening socket).
 * - TLS connections cannot be handed off: the TLS session lives in this thread's OpenSSL state.
 *   With TLS on, the thread that terminated TLS keeps the connection (docs/replica-plane.md).
 */
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** What crosses the thread boundary (structured-cloneable; transfer `leftover.buffer`). */
export interface HandOffPackage {
  readonly fd: number;
  /** Consensus-stream bytes already read; the adopting side processes them first. */
  readonly leftover: Uint8Array;
}

/** The libuv handle fields this module relies on (not in @types/node). */
interface TcpHandle {
  readonly fd: number;
  reading: boolean;
  readStop(): number;
}

const parked: Socket[] = [];

/** Sockets parked after a hand-off (never closed); ~1 KiB of heap each. */
export function parkedHandOffCount(): number {
  return parked.length;
}

function handleOf(socket: Socket): TcpHandle | null {
  const handle = (socket as unknown as { _handle?: unknown })._handle;
  if (typeof handle !== 'object' || handle === null) return null;
  const candidate = handle as Partial<TcpHandle>;
  return typeof candidate.fd === 'number' && typeof candidate.readStop === 'function' ? (handle as TcpHandle) : null;
}

/**
 * Stops this thread from ever touching the socket again and returns what the adopting thread
 * needs. The socket must be a connected plaintext TCP socket with nothing left queued for writing
 * (await `flushWrites` first: the last handshake frame must have reached the kernel). Throws a
 * TypeError otherwise, and for a TLS socket.
 */
export function detachForHandOff(socket: Socket, leftover: Uint8Array): HandOffPackage {
  if (socket instanceof TLSSocket) throw new TypeError('a TLS socket cannot be handed off by fd: keep it on the thread that terminated TLS');
  const handle = handleOf(socket);
  if (handle === null || socket.destroyed || handle.fd < 0) throw new TypeError('detachForHandOff: not a connected TCP socket with an fd');
  if (socket.writableLength > 0) throw new TypeError('detachForHandOff: wait for the handshake frames to flush first (flushWrites)');
  // 1. No more reads on this thread: stop the libuv handle, and make sure the stream machinery
  //    (which re-arms reading whenever its buffer runs low) can never start it again.
  socket.pause();
  socket.removeAllListeners();
  socket.on('error', () => undefined);
  handle.reading = false;
  handle.readStop();
  (socket as unknown as { _read: (size: number) => void })._read = () => undefined;
  // 2. Bytes the stream already holds follow the handshake's leftover, in order.
  const parts: Uint8Array[] = leftover.length > 0 ? [leftover] : [];
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) parts.push(chunk);
  // 3. Park: no timers, no ref on the loop, never destroyed.
  socket.setTimeout(0);
  socket.unref();
  parked.push(socket);
  return { fd: handle.fd, leftover: concat(parts) };
}

/**
 * Resolves true once everything written to the socket has reached the kernel (the hand-off
 * precondition: a write still pending in this thread's libuv handle could interleave with the
 * adopting thread's writes), false if the socket closed or `timeoutMs` passed first. Polls: the
 * last handshake frame is 256 bytes on a fresh connection, so this almost always returns at once.
 */
export async function flushWrites(socket: Socket, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (socket.writableLength > 0 && !socket.destroyed) {
    if (Date.now() > until) return false;
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
  }
  return !socket.destroyed;
}

/**
 * Adopting side: a socket on this thread that owns the fd. Pass `leftover` to the
 * `PeerConnection` (it processes those bytes before reading the socket).
 */
export function adoptHandedOff(pkg: HandOffPackage): { readonly socket: Socket; readonly leftover: Uint8Array } {
  if (!(Number.isInteger(pkg.fd) && pkg.fd >= 0)) throw new TypeError(`adoptHandedOff: bad fd ${pkg.fd}`);
  const socket = new Socket({ fd: pkg.fd, readable: true, writable: true });
  socket.pause();
  socket.setNoDelay(true);
  return { socket, leftover: pkg.leftover };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return (parts[0] as Uint8Array).slice();
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
