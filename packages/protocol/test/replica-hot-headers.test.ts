import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import {
  Command, encodeFrame, encodeHeader, encodeReplyFrame, sealHeader, validateHeader,
  bodyWithHeadroom, writeCommitFrame, writePrepareFrame, writePrepareOkFrame, writeReplyFrame,
} from '../src/index.js';

// The hot writers must be byte-identical to the table-driven encoders for every field value.
const METADATA_GROUP = 1n << 63n;

function fields(p: Prng) {
  const safe = (): number => p.below(2) === 0 ? p.below(1000) : Number(p.u64() & ((1n << 53n) - 1n));
  return {
    cluster: p.u128(), view: p.u32(), replica: p.below(32),
    client: p.u128(), parent: p.u128(), requestChecksum: p.below(3) === 0 ? 0n : p.u128(),
    op: safe(), commit: safe(), timestamp: p.u64(), request: p.u64(), operation: p.pick([1, 3, 128, 141, 160, 161]),
    group: p.bool() ? METADATA_GROUP : p.u64() & 0xfffffffffffffn, userId: p.u32(),
  };
}

describe('hot-path header writers', () => {
  it('Prepare around a body with headroom: framed in place once, the same bytes as a copy', () => {
    const p = new Prng(12);
    for (let i = 0; i < 200; i++) {
      const f = fields(p);
      const content = p.bytes(p.below(300));
      const body = bodyWithHeadroom(content.length);
      body.set(content);
      const expected = writePrepareFrame(f, content);
      const framed = writePrepareFrame(f, body);
      expect(framed).toEqual(expected);
      expect(framed.buffer).toBe(body.buffer);
      expect(framed.subarray(256)).toEqual(content);
      // The room was taken: framing the same body again copies into a new buffer.
      const again = writePrepareFrame(f, body);
      expect(again).toEqual(expected);
      expect(again.buffer).not.toBe(body.buffer);
    }
    // A view that is not the whole body after the room is copied, not framed in place.
    const roomy = bodyWithHeadroom(64);
    const part = roomy.subarray(0, 32);
    expect(writePrepareFrame(fields(p), part).buffer).not.toBe(roomy.buffer);
  });

  it('Prepare: identical to encodeFrame + sealHeader, and valid', () => {
    const p = new Prng(11);
    for (let i = 0; i < 2000; i++) {
      const f = fields(p);
      const body = p.bytes(p.below(3) === 0 ? 0 : p.below(300));
      const expected = sealHeader(encodeFrame(Command.Prepare, { ...f, op: BigInt(f.op), commit: BigInt(f.commit) }, body));
      const actual = writePrepareFrame(f, body);
      expect(actual).toEqual(expected);
      expect(validateHeader(actual)).toBeNull();
    }
  });
  it('PrepareOk: identical to encodeHeader + sealHeader', () => {
    const p = new Prng(12);
    for (let i = 0; i < 2000; i++) {
      const f = fields(p);
      const ack = { cluster: f.cluster, view: f.view, replica: f.replica, parent: f.parent, prepareChecksum: f.client, op: f.op, commit: f.commit, timestamp: f.timestamp, request: f.request, operation: f.operation, group: f.group };
      const expected = sealHeader(encodeHeader(Command.PrepareOk, { ...ack, op: BigInt(ack.op), commit: BigInt(ack.commit) }));
      expect(writePrepareOkFrame(ack)).toEqual(expected);
    }
  });
  it('Commit: identical to encodeHeader + sealHeader', () => {
    const p = new Prng(13);
    for (let i = 0; i < 2000; i++) {
      const f = fields(p);
      const c = { cluster: f.cluster, view: f.view, replica: f.replica, commitChecksum: f.parent, timestampMonotonic: BigInt(f.op), commit: f.commit, checkpointOp: 0, group: f.group };
      const expected = sealHeader(encodeHeader(Command.Commit, { ...c, commit: BigInt(c.commit), checkpointOp: 0n }));
      expect(writeCommitFrame(c)).toEqual(expected);
    }
  });
  it('Reply: identical to encodeReplyFrame', () => {
    const p = new Prng(14);
    for (let i = 0; i < 2000; i++) {
      const f = fields(p);
      const status = p.below(2) === 0 ? 0 : p.u32();
      const body = p.bytes(p.below(100));
      const r = { cluster: f.cluster, view: f.view, replica: f.replica, requestChecksum: f.requestChecksum, client: f.client, op: f.op, commit: f.commit, timestamp: f.timestamp, request: f.request, operation: f.operation, status };
      const expected = encodeReplyFrame({ ...r, op: BigInt(r.op), commit: BigInt(r.commit) }, body);
      expect(writeReplyFrame(r, body)).toEqual(expected);
    }
  });
  it('refuses an op that is not a safe integer (our bug, asserted)', () => {
    const f = fields(new Prng(1));
    expect(() => writePrepareOkFrame({ ...f, prepareChecksum: 1n, op: 2 ** 53 })).toThrow(/safe/);
  });
});
