/**
 * The metadata fence of a client connection, over a real loopback socket: a frame pulled while
 * the shard's metadata copy is behind the op the metadata worker published waits (with every
 * frame after it, in order) until the copy reaches that op; the next frame takes a fresh fence;
 * a wait past METADATA_FENCE_WAIT_MS runs the frame anyway and says so. Without the fence a login
 * right after CreateUser, on a connection of another shard, meets a copy without the user.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Operation, RequestHeaderView, encodeRequestHeader } from '@shoal/protocol';
import { type ClientConnection, METADATA_FENCE_WAIT_MS, type ConnectionHandler } from '../src/client-plane/connection.js';
import { closeConnections, loopbackConnection } from './connection-support.js';

const LIMITS = {
  frameSizeMax: 1 << 20, requestsInFlightMax: 8, writeBufferBytesMax: 64 << 20,
  idleTimeoutMs: 0, frameReadTimeoutMs: 60_000, writeStallTimeoutMs: 60_000,
};

/** A shard's view of the metadata ops: what its copy applied and what the worker published. */
class FakeShard implements ConnectionHandler {
  applied = 0n;
  published = 0n;
  readonly ran: bigint[] = [];
  readonly awaiting = new Set<ClientConnection>();
  readonly expired: bigint[] = [];
  readonly holdReads = (): boolean => false;
  /** Runs while a frame is handled (a synchronous answer freeing its slot calls `pump`). */
  during: ((connection: ClientConnection, request: bigint) => void) | null = null;
  onFrame(connection: ClientConnection, frame: Uint8Array): void {
    const request = new RequestHeaderView(frame).request;
    this.ran.push(request);
    this.during?.(connection, request);
  }
  onClose(): void {}
  metadataFence(): bigint | null {
    return this.applied >= this.published ? null : this.published;
  }
  metadataReached(fence: bigint): boolean {
    return this.applied >= fence;
  }
  awaitMetadata(connection: ClientConnection): void {
    this.awaiting.add(connection);
  }
  metadataWaitExpired(_connection: ClientConnection, fence: bigint): void {
    this.expired.push(fence);
  }
  /** The copy applied up to `op`: waiting connections go on (as ClientPlane.onMetadataChange). */
  apply(op: bigint): void {
    this.applied = op;
    const waiting = [...this.awaiting];
    this.awaiting.clear();
    for (const connection of waiting) connection.pump();
  }
}

afterEach(closeConnections);

const pair = (shard: FakeShard): ReturnType<typeof loopbackConnection> => loopbackConnection(LIMITS, shard);

function frames(...requests: number[]): Buffer {
  return Buffer.concat(requests.map((request) => encodeRequestHeader({
    size: 256, client: 7n, operation: Operation.NonReplicated, timestamp: 1n, request: BigInt(request),
  })));
}

/** Resolves once `predicate` holds, checking after each I/O turn (bounded, never a timing assertion). */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !predicate(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(predicate()).toBe(true);
}

describe('ClientConnection metadata fence', () => {
  it('runs frames at once while the copy is current', async () => {
    const shard = new FakeShard();
    shard.applied = 4n;
    shard.published = 4n;
    const { peer } = await pair(shard);
    peer.write(frames(1, 2));
    await until(() => shard.ran.length === 2);
    expect(shard.ran).toEqual([1n, 2n]);
    expect(shard.awaiting.size).toBe(0);
  });

  it('holds the frame and those after it until the copy reaches the published op, then runs them in order', async () => {
    const shard = new FakeShard();
    shard.applied = 5n;
    shard.published = 7n;
    const { connection, peer } = await pair(shard);
    peer.write(frames(1, 2, 3));
    await until(() => shard.awaiting.has(connection));
    expect(shard.ran).toEqual([]);
    shard.apply(6n); // not yet the fence: still parked, registered again
    expect(shard.ran).toEqual([]);
    expect(shard.awaiting.has(connection)).toBe(true);
    shard.apply(7n);
    expect(shard.ran).toEqual([1n, 2n, 3n]);
    expect(shard.expired).toEqual([]);
  });

  it('gives the next frame a fresh fence: an op published meanwhile is waited for too', async () => {
    const shard = new FakeShard();
    shard.applied = 1n;
    shard.published = 2n;
    const { connection, peer } = await pair(shard);
    peer.write(frames(1, 2));
    await until(() => shard.awaiting.has(connection));
    shard.published = 3n; // the worker moved on before this shard's ring was read
    shard.apply(2n);
    expect(shard.ran).toEqual([1n]);
    expect(shard.awaiting.has(connection)).toBe(true);
    shard.apply(3n);
    expect(shard.ran).toEqual([1n, 2n]);
  });

  it('keeps order when a frame answered synchronously pumps again inside the loop (a metadata write landed meanwhile)', async () => {
    const shard = new FakeShard();
    shard.during = (connection, request) => {
      if (request !== 1n) return;
      shard.published = 5n; // another connection's write was answered: the next frames wait for it
      connection.pump(); // a poll of a local partition answered at once frees its slot
    };
    const { connection, peer } = await pair(shard);
    peer.write(frames(1, 2, 3));
    await until(() => shard.awaiting.has(connection));
    expect(shard.ran).toEqual([1n]);
    shard.apply(5n);
    expect(shard.ran).toEqual([1n, 2n, 3n]);
  });

  it('runs a frame parked past the wait bound on the older copy, with a warning, and reads on', async () => {
    const shard = new FakeShard();
    shard.published = 9n;
    const { connection, peer } = await pair(shard);
    peer.write(frames(1));
    await until(() => shard.awaiting.has(connection));
    expect(connection.sweep(Date.now() + 1)).toBeNull();
    expect(shard.ran).toEqual([]);
    expect(connection.sweep(Date.now() + METADATA_FENCE_WAIT_MS + 1000)).toBeNull();
    expect(shard.ran).toEqual([1n]);
    expect(shard.expired).toEqual([9n]);
    shard.published = 0n;
    peer.write(frames(2));
    await until(() => shard.ran.length === 2);
    expect(shard.ran).toEqual([1n, 2n]);
  });
});
