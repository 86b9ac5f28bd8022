/**
 * The simulated network's per-peer queue: the runtime's bounded outbound queue
 * (`message_bus.peer_queue_capacity`, tail drop) drained once per step at the link's bandwidth.
 */
import { describe, expect, it } from 'vitest';
import { CLEAN_NETWORK, Network, stream } from '../src/index.js';

function frame(tag: number, size = 256): Uint8Array {
  const f = new Uint8Array(size);
  f[0] = tag & 0xff;
  f[1] = tag >> 8;
  return f;
}

describe('per-peer queue', () => {
  it('a burst beyond the capacity drops the newest frames, as the runtime\'s queue does', () => {
    const net = new Network(2, 0, stream(1, 1n), { ...CLEAN_NETWORK, peerQueueCapacity: 4 });
    for (let i = 0; i < 7; i++) net.send(0, 1, frame(i), 0);
    expect(net.queued).toBe(4);
    expect(net.stats.queueDropped).toBe(3);
    net.flush(0);
    expect(net.queued).toBe(0);
    const got = [...net.takeReady(1), ...net.takeReady(2), ...net.takeReady(3)].map((p) => p.frame[0]);
    expect(got).toEqual([0, 1, 2, 3]); // the first four, in order; 4..6 were refused
  });

  it('a slow link backs the queue up: at most its bandwidth leaves per step, at least one frame', () => {
    const net = new Network(2, 0, stream(2, 1n), { ...CLEAN_NETWORK, linkBytesPerTick: 600 });
    for (let i = 0; i < 5; i++) net.send(0, 1, frame(i), 0);
    net.flush(0);
    expect(net.queued).toBe(3); // 2 × 256 bytes fit in 600
    net.flush(1);
    expect(net.queued).toBe(1);
    const big = new Network(2, 0, stream(3, 1n), { ...CLEAN_NETWORK, linkBytesPerTick: 100 });
    big.send(0, 1, frame(9, 4096), 0);
    big.flush(0);
    expect(big.queued).toBe(0); // a frame larger than the budget still goes, alone
  });

  it('queues are per directed replica link; client links bypass them; a crash empties its queues', () => {
    const net = new Network(3, 1, stream(4, 1n), { ...CLEAN_NETWORK, peerQueueCapacity: 2 });
    for (let i = 0; i < 3; i++) {
      net.send(0, 1, frame(i), 0);
      net.send(0, 2, frame(i), 0);
      net.send(0, 3, frame(i), 0); // endpoint 3 is a client
    }
    expect(net.stats.queueDropped).toBe(2);
    expect(net.queued).toBe(4);
    expect(net.pending).toBe(3); // the client frames went straight to the wire
    net.send(1, 0, frame(7), 0);
    net.setDown(0, true);
    expect(net.queued).toBe(0);
  });
});
