/**
 * ClientConnection.sendParts over a real loopback socket: `written` (which returns a poll's read
 * buffers to their pool) runs exactly once, only after the bytes were handed to the socket's
 * write path, and at once on a closed connection. Reusing a buffer earlier would corrupt replies.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeConnections, loopbackConnection } from './connection-support.js';

const LIMITS = {
  frameSizeMax: 1 << 20, requestsInFlightMax: 8, writeBufferBytesMax: 64 << 20,
  idleTimeoutMs: 0, frameReadTimeoutMs: 0, writeStallTimeoutMs: 0,
};
const HANDLER = {
  onFrame: () => {}, onClose: () => {}, holdReads: () => false,
  metadataFence: () => null, metadataReached: () => true, awaitMetadata: () => {}, metadataWaitExpired: () => {},
};

afterEach(closeConnections);

const pair = (): ReturnType<typeof loopbackConnection> => loopbackConnection(LIMITS, HANDLER);

describe('ClientConnection.sendParts', () => {
  it('runs `written` once, after the parts went out whole, and the peer receives them in order', async () => {
    const { connection, peer } = await pair();
    const parts = [new Uint8Array(256).fill(1), new Uint8Array(3 << 20).fill(2), new Uint8Array(4096).fill(3)];
    const total = parts.reduce((n, p) => n + p.length, 0);
    let received = 0;
    const chunks: Buffer[] = [];
    const all = new Promise<void>((resolve) => {
      peer.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= total) resolve();
      });
    });
    let calls = 0;
    const done = new Promise<void>((resolve) => connection.sendParts(parts, () => {
      calls += 1;
      resolve();
    }));
    // Not synchronously: the socket still holds the parts (corked until the end of the turn).
    expect(calls).toBe(0);
    await Promise.all([done, all]);
    expect(calls).toBe(1);
    expect(Buffer.concat(chunks).equals(Buffer.concat(parts))).toBe(true);
  });

  it('runs `written` at once when the connection is closed', async () => {
    const { connection } = await pair();
    connection.close('test');
    let calls = 0;
    connection.sendParts([new Uint8Array(300)], () => { calls += 1; });
    expect(calls).toBe(1);
  });
});
