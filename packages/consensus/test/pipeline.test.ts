import { describe, expect, it } from 'vitest';
import { Pipeline, type PipelineEntry } from '../src/index.js';

function entry(op: number, parent: bigint): PipelineEntry {
  return { op, checksum: BigInt(op) * 1000n, parent, client: 1n, request: BigInt(op), operation: 128, token: null, awaiter: null, members: null, echo: null, acks: 0, quorum: false };
}

describe('pipeline (§4.3)', () => {
  it('holds consecutive, hash-chained ops up to its depth', () => {
    const p = new Pipeline(3);
    p.push(entry(5, 4000n));
    p.push(entry(6, 5000n));
    expect(() => p.push(entry(8, 6000n))).toThrow(/does not follow/);
    expect(() => p.push(entry(7, 1n))).toThrow(/does not chain/);
    p.push(entry(7, 6000n));
    expect(p.full).toBe(true);
    expect(() => p.push(entry(8, 7000n))).toThrow(/full/);
    expect(p.get(6)?.op).toBe(6);
    expect(p.get(9)).toBeUndefined();
  });

  it('counts acks once per replica and marks the quorum', () => {
    const p = new Pipeline(2);
    const e = entry(1, 0n);
    p.push(e);
    expect(p.ack(e, 0, 2)).toBe(true);
    expect(p.ack(e, 0, 2)).toBe(false);
    expect(e.quorum).toBe(false);
    p.ack(e, 2, 2);
    expect(e.quorum).toBe(true);
  });

  it('request queue holds 2 × depth; clear returns what was dropped', () => {
    const p = new Pipeline(2);
    const q = { client: 1n, request: 1n, session: 1n, requestChecksum: 0n, operation: 128, body: new Uint8Array(0), userId: 0, timestamp: 0n, token: 1, awaiter: null };
    for (let i = 0; i < 4; i++) expect(p.requests.push(q)).toBe(true);
    expect(p.requests.push(q)).toBe(false);
    expect(p.hasClient(1n)).toBe(true);
    expect(p.clear().requests.length).toBe(4);
    expect(p.hasClient(1n)).toBe(false);
  });
});
