import { describe, expect, it } from 'vitest';
import { buildBatch, concatBatches } from '@shoal/protocol';
import { sameMessages } from '../src/stored-batch.js';

const enc = new TextEncoder();

function batch(ids: number[], origin: bigint, tag = 'm'): Uint8Array {
  const built = buildBatch(ids.map((id, i) => ({ id: BigInt(id), payload: enc.encode(`${tag}${id}`), originTimestamp: origin + BigInt(i) })));
  if (!built.ok) throw new Error(built.reason);
  return built.value;
}

/** The frames of a joined batch after its first member's (what the reader's slice of the second holds). */
function afterFirst(joined: Uint8Array, first: Uint8Array): Uint8Array {
  return joined.subarray(256 + (first.length - 256));
}

describe('the checker reads a group-committed batch as its members sent it', () => {
  it('matches a member whose deltas and checksums were re-based, and nothing else', () => {
    const first = batch([1, 2], 1_000n);
    const second = batch([3, 4, 5], 900n);
    const joined = concatBatches([first, second]);
    expect(joined.ok).toBe(true);
    if (!joined.ok) return;
    const tail = afterFirst(joined.value.bytes, first);
    // The second member's frames moved (offset deltas 2..4, a new origin): bytes differ, messages do not.
    expect(Buffer.compare(Buffer.from(tail), Buffer.from(second.subarray(256)))).not.toBe(0);
    expect(sameMessages(tail, second.subarray(256))).toBe(true);
    // Another payload, another id, or a message missing is not the same.
    expect(sameMessages(tail, batch([3, 4, 5], 900n, 'x').subarray(256))).toBe(false);
    expect(sameMessages(tail, batch([3, 4, 6], 900n).subarray(256))).toBe(false);
    expect(sameMessages(tail, batch([3, 4], 900n).subarray(256))).toBe(false);
    expect(sameMessages(tail.subarray(0, tail.length - 1), second.subarray(256))).toBe(false);
  });
});
