import { describe, expect, it } from 'vitest';
import { AssertionError, toHex } from '@shoal/stdx';
import { xxh3_64 } from '../src/hash/xxh3.js';
import {
  Command,
  METADATA_GROUP,
  XXH3_EMPTY,
  bodyHashOf,
  encodeFrame,
  encodeHeader,
  expectedChecksumBody,
  frameSealOf,
  prepareIdentityOf,
  repairPrepareFrom,
  sealBody,
  sealFrame,
  sealHeader,
  sealPrepareIdentity,
  verifyBodySeal,
  verifyFrameSeal,
  verifyPrepareIdentity,
} from '../src/replica/index.js';
import { CLUSTER, PARTITION_GROUP, get, prepare, repairPrepare, setU32 } from './replica-fixtures.js';

const u128At = (b: Uint8Array, at: number): bigint => b.subarray(at, at + 16).reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);

describe('frame seal (§2.2)', () => {
  it('is XXH3 of bytes 16..256 widened into 0..16', () => {
    const f = get('Commit');
    expect(u128At(f, 0)).toBe(xxh3_64(f.subarray(16, 256)));
    expect(f.subarray(8, 16).every((b) => b === 0)).toBe(true);
    expect(verifyFrameSeal(f)).toBe(true);
  });

  it('reproduces the §2.8 StartViewChange example', () => {
    const svc = encodeHeader(Command.StartViewChange, { cluster: CLUSTER, view: 1, replica: 0, group: METADATA_GROUP });
    expect(frameSealOf(svc)).toBe(0xccf305bd25eeeb9bn);
    sealFrame(svc);
    expect(toHex(svc.subarray(0, 16))).toBe('9bebee25bd05f3cc0000000000000000');
  });

  it('covers every byte 16..256 (checksum_body included) and nothing before', () => {
    const f = get('RequestPrepares');
    for (let i = 0; i < 256; i++) {
      const copy = f.slice();
      copy[i] = (copy[i] as number) ^ 0x01;
      expect(verifyFrameSeal(copy), `byte ${i}`).toBe(false);
    }
  });

  it('treats a zero checksum and a non-zero high half as mismatches', () => {
    const f = get('Commit');
    const zero = f.slice();
    zero.fill(0, 0, 16);
    expect(verifyFrameSeal(zero)).toBe(false);
    const high = f.slice();
    high[15] = 1;
    expect(verifyFrameSeal(high)).toBe(false);
  });

  it('works at an offset inside a larger buffer', () => {
    const f = get('Commit');
    const buffer = new Uint8Array(600);
    buffer.set(f, 100);
    expect(verifyFrameSeal(buffer, 100)).toBe(true);
    expect(frameSealOf(buffer, 100)).toBe(frameSealOf(f));
  });
});

describe('prepare identity (§2.3)', () => {
  it('reproduces the §2.8 example', () => {
    const p = encodeHeader(Command.Prepare, {
      cluster: CLUSTER, checksumBody: XXH3_EMPTY, view: 3, replica: 0, client: 1n, parent: 0n, requestChecksum: 0n,
      op: 1n, commit: 0n, timestamp: 1_000_000n, request: 0n, operation: 1, group: METADATA_GROUP, userId: 1,
    });
    expect(prepareIdentityOf(p)).toBe(0x75550b7c5e5fb913n);
  });

  it('ignores checksum and view, covers everything else', () => {
    const p = prepare();
    const identity = prepareIdentityOf(p);
    const restamped = p.slice();
    setU32(restamped, 52, 99);
    restamped.fill(0xaa, 0, 16);
    expect(prepareIdentityOf(restamped)).toBe(identity);
    for (const i of [16, 32, 48, 56, 60, 61, 100, 128, 209, 255]) {
      const copy = p.slice();
      copy[i] = (copy[i] as number) ^ 0x80;
      expect(prepareIdentityOf(copy), `byte ${i}`).not.toBe(identity);
    }
  });

  it('checks a RepairPrepare as if its command byte were 6, without touching the caller buffer', () => {
    const p = prepare();
    const r = repairPrepare();
    expect(r[60]).toBe(19);
    expect(prepareIdentityOf(r)).toBe(prepareIdentityOf(p));
    expect(r[60]).toBe(19);
    expect(verifyPrepareIdentity(r)).toBe(true);
    expect(repairPrepareFrom(p)).toEqual(r);
    const snapshot = r.slice();
    verifyPrepareIdentity(r);
    prepareIdentityOf(r);
    expect(r).toEqual(snapshot);
  });

  it('verify: zero checksum = unsealed (passes), wrong or high-half checksum fails', () => {
    const p = prepare();
    expect(verifyPrepareIdentity(p)).toBe(true);
    const zero = p.slice();
    zero.fill(0, 0, 16);
    expect(verifyPrepareIdentity(zero)).toBe(true);
    const wrong = p.slice();
    wrong[0] = (wrong[0] as number) ^ 1;
    expect(verifyPrepareIdentity(wrong)).toBe(false);
    const high = p.slice();
    high[12] = 1;
    expect(verifyPrepareIdentity(high)).toBe(false);
    sealPrepareIdentity(wrong);
    expect(verifyPrepareIdentity(wrong)).toBe(true);
  });
});

describe('body seal (§2.4, §2.5)', () => {
  const header = (command: number, group: bigint, bodyLength: number): Uint8Array => {
    const f = new Uint8Array(256 + bodyLength);
    f[60] = command;
    setU32(f, 48, 256 + bodyLength);
    new DataView(f.buffer).setBigUint64(216, group, true);
    for (let i = 256; i < f.length; i++) f[i] = i & 0xff;
    return f;
  };

  it('metadata prepare: XXH3(body), also for an empty body', () => {
    expect(expectedChecksumBody(header(6, METADATA_GROUP, 0))).toBe(XXH3_EMPTY);
    const f = header(6, METADATA_GROUP, 10);
    expect(expectedChecksumBody(f)).toBe(xxh3_64(f.subarray(256)));
    expect(expectedChecksumBody(header(19, METADATA_GROUP, 0))).toBe(XXH3_EMPTY);
  });

  it('partition prepare: 0', () => {
    expect(expectedChecksumBody(header(6, PARTITION_GROUP, 10))).toBe(0n);
    expect(expectedChecksumBody(header(6, 0n, 0))).toBe(0n);
  });

  it('DoViewChange / StartView: XXH3(body) when non-empty, 0 when empty', () => {
    for (const command of [11, 12]) {
      expect(expectedChecksumBody(header(command, 0n, 0))).toBe(0n);
      const f = header(command, 0n, 256);
      expect(expectedChecksumBody(f)).toBe(xxh3_64(f.subarray(256)));
    }
  });

  it('every other command: 0, even with a body', () => {
    for (const command of [5, 7, 9, 10, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]) {
      expect(expectedChecksumBody(header(command, METADATA_GROUP, 32)), `command ${command}`).toBe(0n);
    }
  });

  it('receiver rules: prepares check a non-zero checksum_body; DVC/SV check any non-empty body', () => {
    const p = prepare();
    expect(verifyBodySeal(p)).toBe(true);
    const badBody = p.slice();
    badBody[badBody.length - 1] = (badBody[badBody.length - 1] as number) ^ 1;
    expect(verifyBodySeal(badBody)).toBe(false);
    badBody.fill(0, 16, 32); // checksum_body 0 on a prepare: not checked
    expect(verifyBodySeal(badBody)).toBe(true);

    const dvc = get('DoViewChange');
    expect(verifyBodySeal(dvc)).toBe(true);
    const zeroSeal = dvc.slice();
    zeroSeal.fill(0, 16, 32); // zero checksum_body is not "skip" when a body is present
    expect(verifyBodySeal(zeroSeal)).toBe(false);
    const empty = get('DoViewChangeEmpty');
    empty[16] = 0x55; // an empty body passes whatever checksum_body says
    expect(verifyBodySeal(empty)).toBe(true);
    const chunk = get('StateChunk');
    chunk[300] = 1;
    expect(verifyBodySeal(chunk)).toBe(true);
  });

  it('sealBody writes the sender value; bodyHashOf clamps to the buffer', () => {
    const f = header(12, 0n, 256);
    sealBody(f);
    expect(u128At(f, 16)).toBe(xxh3_64(f.subarray(256)));
    expect(bodyHashOf(f.subarray(0, 300))).toBe(xxh3_64(f.subarray(256, 300)));
  });
});

describe('sealHeader', () => {
  it('seals, identifies or zeroes by command', () => {
    const svc = encodeFrame(Command.StartViewChange, { cluster: CLUSTER, view: 1, replica: 0, group: METADATA_GROUP });
    expect(verifyFrameSeal(sealHeader(svc))).toBe(true);
    const p = prepare();
    expect(u128At(p, 0)).toBe(prepareIdentityOf(p));
    expect(u128At(p, 16)).toBe(xxh3_64(p.subarray(256)));
    const request = get('Request');
    expect(request.subarray(0, 32).every((b) => b === 0)).toBe(true);
    request.fill(7, 0, 32);
    sealHeader(request);
    expect(request.subarray(0, 32).every((b) => b === 0)).toBe(true);
  });
});

describe('short buffers', () => {
  it('verifiers say no, computers assert (our bug)', () => {
    const short = get('Commit').subarray(0, 200);
    expect(verifyFrameSeal(short)).toBe(false);
    expect(verifyPrepareIdentity(prepare().subarray(0, 255))).toBe(false);
    expect(verifyBodySeal(short)).toBe(false);
    expect(verifyFrameSeal(get('Commit'), 1)).toBe(false);
    expect(() => frameSealOf(short)).toThrow(AssertionError);
    expect(() => prepareIdentityOf(short)).toThrow(AssertionError);
    expect(() => sealHeader(short)).toThrow(AssertionError);
  });
});
