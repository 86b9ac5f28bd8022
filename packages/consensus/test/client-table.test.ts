import { describe, expect, it } from 'vitest';
import { decodeClientTable, encodeClientTable, encodeReplyFrame } from '@shoal/protocol';
import { ClientTable } from '../src/index.js';

function reply(client: bigint, request: bigint, commit: bigint, requestChecksum = 0n): Uint8Array {
  return encodeReplyFrame({ client, request, commit, op: commit, operation: 128, requestChecksum }, new Uint8Array([1, 2]));
}

describe('client table (§7)', () => {
  it('register creates an entry whose epoch is the register op; requests are classified', () => {
    const t = new ClientTable(4);
    t.register(9n, 3, 10n, reply(9n, 0n, 10n));
    expect(t.check(8n, 10n, 1n, 0n).kind).toBe('no_session');
    expect(t.check(9n, 9n, 1n, 0n).kind).toBe('fenced');
    expect(t.check(9n, 11n, 1n, 0n).kind).toBe('epoch_ahead');
    expect(t.check(9n, 10n, 1n, 0n).kind).toBe('new');
    t.record(9n, 1n, 77n, reply(9n, 1n, 11n, 77n));
    expect(t.check(9n, 10n, 1n, 0n).kind).toBe('duplicate');
    expect(t.check(9n, 10n, 1n, 78n).kind).toBe('checksum_mismatch');
    expect(t.check(9n, 10n, 2n, 0n).kind).toBe('new');
  });

  it('the ring keeps the 5 newest replies; older requests are already applied', () => {
    const t = new ClientTable(4);
    t.register(1n, 1, 1n, reply(1n, 0n, 1n));
    for (let r = 1n; r <= 7n; r++) t.record(1n, r, 0n, reply(1n, r, 1n + r));
    expect(t.get(1n)?.replies.length).toBe(5);
    expect(t.check(1n, 1n, 7n, 0n).kind).toBe('duplicate');
    expect(t.check(1n, 1n, 2n, 0n).kind).toBe('already_applied');
  });

  it('rebind keeps the watermark, drops the old register reply, moves the epoch', () => {
    const t = new ClientTable(4);
    t.register(1n, 1, 1n, reply(1n, 0n, 1n));
    t.record(1n, 1n, 0n, reply(1n, 1n, 2n));
    t.register(1n, 1, 5n, reply(1n, 0n, 5n));
    const e = t.get(1n);
    expect(e?.epoch).toBe(5n);
    expect(e?.watermark).toBe(1n);
    expect(e?.replies.length).toBe(2);
  });

  it('a full table evicts the smallest latest_commit (ties: lowest slot); client 0 is never cached', () => {
    const t = new ClientTable(2);
    t.register(1n, 1, 1n, reply(1n, 0n, 1n));
    t.register(2n, 1, 2n, reply(2n, 0n, 2n));
    t.record(1n, 1n, 0n, reply(1n, 1n, 3n));
    t.register(3n, 1, 4n, reply(3n, 0n, 4n));
    expect(t.get(2n)).toBeUndefined();
    expect(t.get(1n)).toBeDefined();
    t.record(0n, 1n, 0n, reply(0n, 1n, 5n));
    expect(t.size).toBe(2);
  });

  it('ICT2 export/import and the checkpoint form round-trip', () => {
    const t = new ClientTable(4);
    t.register(1n, 1, 1n, reply(1n, 0n, 1n));
    t.record(1n, 1n, 5n, reply(1n, 1n, 2n, 5n));
    const bytes = encodeClientTable(t.exportEntries());
    const decoded = decodeClientTable(bytes);
    expect(decoded.ok).toBe(true);
    const u = new ClientTable(2);
    if (decoded.ok) u.importEntries(decoded.value);
    expect(u.check(1n, 1n, 1n, 5n).kind).toBe('duplicate');
    const cp = t.checkpointEntries();
    const v = new ClientTable(2);
    v.restoreCheckpoint(cp);
    expect(v.get(1n)?.watermark).toBe(1n);
    v.checkStructure();
  });

  it('logout removes the entry', () => {
    const t = new ClientTable(2);
    t.register(1n, 1, 1n, reply(1n, 0n, 1n));
    expect(t.logout(1n)).toBe(true);
    expect(t.logout(1n)).toBe(false);
    expect(t.check(1n, 1n, 1n, 0n).kind).toBe('no_session');
  });
});
