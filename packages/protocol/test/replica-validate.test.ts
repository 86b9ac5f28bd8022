import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import {
  Command,
  MESSAGE_SIZE_MAX_DEFAULT,
  isPrepareCommand,
  isSealedCommand,
  sealFrame,
  sealPrepareIdentity,
  validateHeader,
  validateCachedReplyHeader,
  encodeHeader,
  encodeFrame,
} from '../src/replica/index.js';
import { HEADER_SIZE } from '../src/replica/header-layout.js';
import { CLUSTER, get, setU32, setU64, validFrames } from './replica-fixtures.js';

/** Re-seals the checksum only (never checksum_body), so a test reaches the rule it targets. */
function resealOnly(bytes: Uint8Array): Uint8Array {
  const command = bytes[60] as number;
  if (isSealedCommand(command)) sealFrame(bytes);
  else if (isPrepareCommand(command)) sealPrepareIdentity(bytes);
  return bytes;
}

function mutated(name: string, change: (b: Uint8Array) => void, reseal = true): Uint8Array {
  const f = get(name);
  change(f);
  return reseal ? resealOnly(f) : f;
}

function withBody(name: string, bodyLength: number): Uint8Array {
  const f = get(name);
  const out = new Uint8Array(HEADER_SIZE + bodyLength);
  out.set(f.subarray(0, HEADER_SIZE));
  setU32(out, 48, HEADER_SIZE + bodyLength);
  return resealOnly(out);
}

const UNSAFE = BigInt(Number.MAX_SAFE_INTEGER) + 1n;

describe('validateHeader accepts every valid frame', () => {
  for (const [name, frame] of validFrames()) {
    it(name, () => {
      expect(validateHeader(frame)).toBeNull();
      expect(validateHeader(frame, 0, { replicaCount: 3, messageSizeMax: frame.length })).toBeNull();
      const shifted = new Uint8Array(frame.length + 37);
      shifted.set(frame, 37);
      expect(validateHeader(shifted, 37)).toBeNull();
    });
  }
});

describe('step 1: framing', () => {
  it('refuses short buffers, bad sizes, frames past the buffer and commands above 29', () => {
    const commit = get('Commit');
    expect(validateHeader(commit.subarray(0, 255))).toBe('truncated_header');
    expect(validateHeader(commit, -1)).toBe('truncated_header');
    expect(validateHeader(commit, 1)).toBe('truncated_header');
    expect(validateHeader(mutated('Commit', (b) => setU32(b, 48, 255), false))).toBe('size_below_header');
    expect(validateHeader(mutated('Commit', (b) => setU32(b, 48, 0), false))).toBe('size_below_header');
    const chunk = get('StateChunk');
    expect(validateHeader(chunk, 0, { messageSizeMax: chunk.length - 1 })).toBe('size_above_max');
    expect(validateHeader(mutated('Commit', (b) => setU32(b, 48, MESSAGE_SIZE_MAX_DEFAULT + 1), false))).toBe('size_above_max');
    expect(validateHeader(chunk.subarray(0, chunk.length - 1))).toBe('truncated_frame');
    for (const command of [30, 31, 128, 255]) {
      expect(validateHeader(mutated('Commit', (b) => { b[60] = command; }, false))).toBe('command_out_of_range');
    }
  });
});

describe('step 2: classification', () => {
  it('drops client-bound, reserved and handshake commands', () => {
    for (const command of [8, 13]) expect(validateHeader(mutated('Commit', (b) => { b[60] = command; }, false))).toBe('client_bound_command');
    for (const command of [0, 1, 2, 3, 4]) expect(validateHeader(mutated('Commit', (b) => { b[60] = command; }, false))).toBe('reserved_command');
    for (const command of [14, 15, 16]) expect(validateHeader(mutated('Commit', (b) => { b[60] = command; }, false))).toBe('handshake_command');
  });
});

describe('step 3: bit patterns', () => {
  it('refuses undeclared operations on Request, Prepare, RepairPrepare and PrepareOk', () => {
    expect(validateHeader(mutated('Request', (b) => { b[176] = 4; }))).toBe('invalid_operation');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 150; }))).toBe('invalid_operation');
    expect(validateHeader(mutated('Prepare', (b) => { b[208] = 69; }))).toBe('invalid_operation');
    expect(validateHeader(mutated('RepairPrepare', (b) => { b[208] = 163; }))).toBe('invalid_operation');
    expect(validateHeader(mutated('PrepareOk', (b) => { b[192] = 255; }))).toBe('invalid_operation');
    // Declared values pass, server-internal ones included.
    for (const op of [0, 1, 2, 3, 64, 68, 128, 138, 149, 160, 162]) {
      expect(validateHeader(mutated('PrepareOk', (b) => { b[192] = op; })), `operation ${op}`).toBeNull();
    }
  });

  it('refuses undeclared forwarding outcomes', () => {
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { b[255] = 7; setU64(b, 160, 0n); setU64(b, 168, 0n); }))).toBe('invalid_outcome');
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => { b[255] = 5; setU64(b, 160, 0n); }))).toBe('invalid_outcome');
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { b[255] = 6; setU64(b, 160, 0n); setU64(b, 168, 0n); }))).toBeNull();
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => { b[255] = 4; setU64(b, 160, 0n); }))).toBeNull();
  });

  it('runs before the seal check', () => {
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => { b[255] = 9; }, false))).toBe('invalid_outcome');
  });
});

describe('step 4: frame seal', () => {
  it('refuses a flipped byte on every sealed command, and a zero checksum', () => {
    for (const [name, frame] of validFrames()) {
      if (!isSealedCommand(frame[60] as number)) continue;
      const flipped = frame.slice();
      flipped[200] = (flipped[200] as number) ^ 0x40;
      expect(validateHeader(flipped), name).toBe('frame_seal_mismatch');
      const zero = frame.slice();
      zero.fill(0, 0, 16);
      expect(validateHeader(zero), name).toBe('frame_seal_mismatch');
    }
  });

  it('precedes validate(): a broken Commit with a bad seal reports the seal', () => {
    expect(validateHeader(mutated('Commit', (b) => setU32(b, 48, 512), false).slice(0, 256))).toBe('truncated_frame');
    const big = new Uint8Array(512);
    big.set(get('Commit'));
    setU32(big, 48, 512);
    expect(validateHeader(big)).toBe('frame_seal_mismatch');
    expect(validateHeader(resealOnly(big))).toBe('size_not_header_only');
  });
});

describe('step 5: validate() per command', () => {
  it('Request (routed): client, operation, Register and session rules', () => {
    expect(validateHeader(mutated('Request', (b) => b.fill(0, 128, 144)))).toBe('client_zero');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 0; }))).toBe('operation_reserved');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 1; setU64(b, 168, 0n); }))).toBe('register_session_nonzero');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 1; setU64(b, 184, 0n); }))).toBe('register_request_nonzero');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 1; setU64(b, 184, 0n); setU64(b, 168, 0n); }))).toBeNull();
    expect(validateHeader(mutated('Request', (b) => setU64(b, 184, 0n)))).toBe('session_zero');
    expect(validateHeader(mutated('Request', (b) => setU64(b, 168, 0n)))).toBe('request_zero');
    expect(validateHeader(mutated('Request', (b) => { b[176] = 2; setU64(b, 184, 0n); setU64(b, 168, 0n); setU32(b, 196, 1); }))).toBeNull();
    expect(validateHeader(mutated('Request', (b) => { b[176] = 3; setU64(b, 168, 0n); }))).toBe('request_zero');
  });

  it('Prepare / RepairPrepare: reserved regions zero (identity recomputed), ops safe', () => {
    for (const name of ['Prepare', 'RepairPrepare']) {
      expect(validateHeader(mutated(name, (b) => { b[62] = 1; })), name).toBe('reserved_frame_nonzero');
      expect(validateHeader(mutated(name, (b) => { b[127] = 1; })), name).toBe('reserved_frame_nonzero');
      expect(validateHeader(mutated(name, (b) => { b[228] = 1; })), name).toBe('reserved_nonzero');
      expect(validateHeader(mutated(name, (b) => { b[255] = 1; })), name).toBe('reserved_nonzero');
      // Padding 209..216 is not validated (but is inside the identity).
      expect(validateHeader(mutated(name, (b) => { b[210] = 1; })), name).toBeNull();
      expect(validateHeader(mutated(name, (b) => setU64(b, 176, UNSAFE))), name).toBe('op_not_safe_integer');
      expect(validateHeader(mutated(name, (b) => setU64(b, 184, UNSAFE))), name).toBe('op_not_safe_integer');
    }
    // A Prepare may name client 0 (server-originated ops).
    expect(validateHeader(mutated('Prepare', (b) => b.fill(0, 128, 144)))).toBeNull();
  });

  it('PrepareOk: ops safe', () => {
    expect(validateHeader(mutated('PrepareOk', (b) => setU64(b, 160, UNSAFE)))).toBe('op_not_safe_integer');
    expect(validateHeader(mutated('PrepareOk', (b) => setU64(b, 168, 1n << 63n)))).toBe('op_not_safe_integer');
  });

  it('Commit: header-only, commit safe', () => {
    expect(validateHeader(withBody('Commit', 8))).toBe('size_not_header_only');
    expect(validateHeader(mutated('Commit', (b) => setU64(b, 152, UNSAFE)))).toBe('op_not_safe_integer');
    expect(validateHeader(mutated('Commit', (b) => setU64(b, 160, UNSAFE)))).toBeNull(); // checkpoint_op unused
  });

  it('StartViewChange and RequestStartView: release zero', () => {
    expect(validateHeader(mutated('StartViewChange', (b) => setU32(b, 56, 1)))).toBe('release_nonzero');
    expect(validateHeader(mutated('RequestStartView', (b) => setU32(b, 56, 1)))).toBe('release_nonzero');
    // Reserved bytes are covered by the seal only.
    expect(validateHeader(mutated('StartViewChange', (b) => { b[200] = 1; }))).toBeNull();
  });

  it('DoViewChange: release, log_view <= view, commit <= op, body length, bits past the suffix, safe ops', () => {
    expect(validateHeader(mutated('DoViewChange', (b) => setU32(b, 56, 1)))).toBe('release_nonzero');
    expect(validateHeader(mutated('DoViewChange', (b) => setU32(b, 152, 5)))).toBe('log_view_above_view');
    expect(validateHeader(mutated('DoViewChange', (b) => setU32(b, 152, 4)))).toBeNull();
    expect(validateHeader(mutated('DoViewChange', (b) => setU64(b, 136, 4n)))).toBe('commit_above_op');
    expect(validateHeader(mutated('DoViewChange', (b) => setU64(b, 136, (1n << 32n) + 1n)))).toBe('commit_above_op');
    expect(validateHeader(withBody('DoViewChangeEmpty', 100))).toBe('body_not_whole_headers');
    expect(validateHeader(withBody('DoViewChangeEmpty', 129 * 256))).toBe('suffix_too_many_entries');
    expect(validateHeader(mutated('DoViewChange', (b) => { b[224] = 0b1000; }))).toBe('nack_bit_past_suffix');
    expect(validateHeader(mutated('DoViewChange', (b) => { b[239] = 0x80; }))).toBe('nack_bit_past_suffix');
    expect(validateHeader(mutated('DoViewChange', (b) => { b[240] = 0b1111; }))).toBe('present_bit_past_suffix');
    expect(validateHeader(mutated('DoViewChangeEmpty', (b) => { b[224] = 1; }))).toBe('nack_bit_past_suffix');
    expect(validateHeader(mutated('DoViewChangeEmpty', (b) => { setU64(b, 128, UNSAFE); setU64(b, 136, 0n); }))).toBe('op_not_safe_integer');
  });

  it('StartView: release, commit <= op, body length', () => {
    expect(validateHeader(mutated('StartView', (b) => setU32(b, 56, 1)))).toBe('release_nonzero');
    expect(validateHeader(mutated('StartView', (b) => setU64(b, 136, 4n)))).toBe('commit_above_op');
    expect(validateHeader(withBody('StartView', 300))).toBe('body_not_whole_headers');
    expect(validateHeader(withBody('StartView', 129 * 256))).toBe('suffix_too_many_entries');
  });

  it('RequestPrepares: from_op non-zero and <= to_op', () => {
    expect(validateHeader(mutated('RequestPrepares', (b) => setU64(b, 144, 0n)))).toBe('from_op_zero');
    expect(validateHeader(mutated('RequestPrepares', (b) => setU64(b, 144, 4n)))).toBe('from_op_above_to_op');
    expect(validateHeader(mutated('RequestPrepares', (b) => setU64(b, 144, 3n)))).toBeNull();
    expect(validateHeader(mutated('RequestPrepares', (b) => setU64(b, 152, UNSAFE)))).toBe('op_not_safe_integer');
  });

  it('RepairDone / RangeEvicted: op safe', () => {
    expect(validateHeader(mutated('RepairDone', (b) => setU64(b, 144, UNSAFE)))).toBe('op_not_safe_integer');
    expect(validateHeader(mutated('RangeEvicted', (b) => setU64(b, 144, UNSAFE)))).toBe('op_not_safe_integer');
  });

  it('RequestStateTransfer: header-only', () => {
    expect(validateHeader(withBody('RequestStateTransfer', 1))).toBe('size_not_header_only');
  });

  it('StateTransferTarget: booleans, not both, refusal header-only, safe ops', () => {
    expect(validateHeader(mutated('StateTransferTarget', (b) => { b[160] = 2; }))).toBe('available_not_boolean');
    expect(validateHeader(mutated('StateTransferTargetRefusal', (b) => { b[161] = 2; }))).toBe('unavailable_transient_not_boolean');
    expect(validateHeader(mutated('StateTransferTarget', (b) => { b[161] = 1; }))).toBe('available_and_transient');
    expect(validateHeader(withBody('StateTransferTargetRefusal', 4))).toBe('refusal_with_body');
    expect(validateHeader(mutated('StateTransferTarget', (b) => setU64(b, 168, UNSAFE)))).toBe('op_not_safe_integer');
    expect(validateHeader(mutated('StateTransferTarget', (b) => setU64(b, 144, UNSAFE)))).toBe('op_not_safe_integer');
  });

  it('RequestStateChunk: len non-zero, header-only, offset safe; StateChunk: offset safe', () => {
    expect(validateHeader(mutated('RequestStateChunk', (b) => setU32(b, 160, 0)))).toBe('len_zero');
    expect(validateHeader(withBody('RequestStateChunk', 16))).toBe('size_not_header_only');
    expect(validateHeader(mutated('RequestStateChunk', (b) => setU64(b, 144, UNSAFE)))).toBe('op_not_safe_integer');
    expect(validateHeader(mutated('StateChunk', (b) => setU64(b, 144, UNSAFE)))).toBe('op_not_safe_integer');
  });

  it('forwarding: size, client, nonce, per-command reserved, outcome rules', () => {
    const cases: [string, number, number][] = [
      // name, client offset, nonce offset
      ['ForwardRegister', 128, 144],
      ['ForwardRegisterResult', 144, 128],
      ['ForwardLogout', 128, 144],
      ['ForwardLogoutResult', 144, 128],
    ];
    for (const [name, clientAt, nonceAt] of cases) {
      expect(validateHeader(withBody(name, 8)), name).toBe('size_not_header_only');
      expect(validateHeader(mutated(name, (b) => b.fill(0, clientAt, clientAt + 16))), name).toBe('client_zero');
      expect(validateHeader(mutated(name, (b) => b.fill(0, nonceAt, nonceAt + 16))), name).toBe('nonce_zero');
      expect(validateHeader(mutated(name, (b) => { b[254] = 1; })), name).toBe('reserved_nonzero');
      // bytes 62..128 are covered by the seal only (vectors README disagreement 3).
      expect(validateHeader(mutated(name, (b) => { b[100] = 1; })), name).toBeNull();
    }
    expect(validateHeader(mutated('ForwardRegister', (b) => { b[164] = 1; }))).toBe('reserved_nonzero');
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { b[176] = 1; }))).toBe('reserved_nonzero');
    expect(validateHeader(mutated('ForwardLogout', (b) => { b[176] = 1; }))).toBe('reserved_nonzero');
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => { b[168] = 1; }))).toBe('reserved_nonzero');
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { b[255] = 1; setU64(b, 168, 0n); }))).toBe('bind_on_failure');
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { b[255] = 1; setU64(b, 160, 0n); }))).toBe('bind_on_failure');
    expect(validateHeader(mutated('ForwardRegisterResult', (b) => { setU64(b, 160, 0n); setU64(b, 168, 0n); }))).toBeNull();
    expect(validateHeader(mutated('ForwardLogout', (b) => setU64(b, 160, 0n)))).toBe('session_zero');
    expect(validateHeader(mutated('ForwardLogout', (b) => setU64(b, 168, 0n)))).toBe('request_zero');
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => { b[255] = 2; }))).toBe('commit_on_failure');
    expect(validateHeader(mutated('ForwardLogoutResult', (b) => setU64(b, 160, UNSAFE)))).toBe('op_not_safe_integer');
  });

  it('drops replica >= replica_count when a count is given, after the seal and rules', () => {
    const f = get('Commit');
    expect(validateHeader(f, 0, { replicaCount: 2 })).toBeNull(); // replica 1
    expect(validateHeader(f, 0, { replicaCount: 1 })).toBe('replica_out_of_range');
    expect(validateHeader(mutated('Commit', (b) => { b[61] = 200; }), 0, { replicaCount: 3 })).toBe('replica_out_of_range');
    expect(validateHeader(mutated('Commit', (b) => { b[61] = 200; }))).toBeNull();
    expect(validateHeader(mutated('Commit', (b) => { b[61] = 200; }, false), 0, { replicaCount: 3 })).toBe('frame_seal_mismatch');
  });
});

describe('steps 6 and 7: bodies', () => {
  it('DoViewChange / StartView: the body must match checksum_body', () => {
    for (const name of ['DoViewChange', 'StartView']) {
      const f = get(name);
      f[f.length - 1] = (f[f.length - 1] as number) ^ 1;
      expect(validateHeader(f), name).toBe('body_seal_mismatch');
    }
  });

  it('Prepare / RepairPrepare: identity, then body', () => {
    for (const name of ['Prepare', 'RepairPrepare']) {
      const wrongIdentity = get(name);
      wrongIdentity[3] = (wrongIdentity[3] as number) ^ 1;
      expect(validateHeader(wrongIdentity), name).toBe('prepare_identity_mismatch');
      const edited = get(name);
      edited[200] = (edited[200] as number) ^ 1; // request field changed, identity not recomputed
      expect(validateHeader(edited), name).toBe('prepare_identity_mismatch');
      const badBody = get(name);
      badBody[badBody.length - 1] = (badBody[badBody.length - 1] as number) ^ 1;
      expect(validateHeader(badBody), name).toBe('body_seal_mismatch');
    }
    // An unsealed (zero-checksum) prepare skips the identity check.
    expect(validateHeader(mutated('Prepare', (b) => b.fill(0, 0, 16), false))).toBeNull();
    // Partition prepares carry checksum_body 0: the body is not checked here.
    const partition = get('PartitionPrepare');
    partition[partition.length - 1] = 99;
    expect(validateHeader(partition)).toBeNull();
  });
});

describe('client-bound shapes', () => {
  const reply = (): Uint8Array => encodeFrame(8, {
    cluster: CLUSTER, view: 3, replica: 0, requestChecksum: 0n, context: 0n, client: 5n, op: 1n, commit: 1n, timestamp: 0n,
    request: 1n, operation: 128, status: 0,
  }, new Uint8Array(4));
  const eviction = (reason: number, max = 0, min = 0): Uint8Array => encodeHeader(13, {
    cluster: CLUSTER, view: 3, replica: 0, client: 5n, serverProtocolVersion: max, serverProtocolVersionMin: min, reason,
  });

  it('Reply: command 8 and a declared operation', () => {
    expect(validateCachedReplyHeader(reply())).toBeNull();
    expect(validateCachedReplyHeader(reply(), 5)).toBe('truncated_header');
    const bad = reply();
    bad[208] = 7;
    expect(validateCachedReplyHeader(bad)).toBe('invalid_operation');
    bad[60] = 7;
    expect(validateCachedReplyHeader(bad)).toBe('not_a_reply');
    expect(validateHeader(reply())).toBe('client_bound_command');
  });

  it('Eviction is refused on the replica plane', () => {
    expect(validateHeader(eviction(1))).toBe('client_bound_command');
  });
});

describe('robustness', () => {
  it('never throws on random and mutated input', () => {
    const prng = new Prng(7);
    const seeds = [...validFrames().values()];
    for (let i = 0; i < 3000; i++) {
      let input: Uint8Array;
      if (prng.chance(1, 3)) input = prng.bytes(prng.range(0, 700));
      else {
        input = prng.pick(seeds).slice();
        for (let m = prng.range(1, 4); m > 0; m--) input[prng.below(input.length)] = prng.below(256);
        if (prng.chance(1, 4)) input = input.subarray(0, prng.below(input.length + 1));
      }
      const reason = validateHeader(input, 0, { replicaCount: 3 });
      expect(reason === null || typeof reason === 'string').toBe(true);
    }
  });

  it('does not mutate its input', () => {
    for (const frame of validFrames().values()) {
      const copy = frame.slice();
      validateHeader(frame);
      expect(frame).toEqual(copy);
    }
    expect(Command.Request).toBe(5);
  });
});
