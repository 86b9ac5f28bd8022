/**
 * The client table inside snapshot.bin (replication-semantics.md §9.3, element 6):
 *
 *   client_table = nil | [slots]
 *   slots        = array of [slot_index u32, [client_id u128, epoch u64, user_id u32, watermark u64,
 *                                             watermark_checksum u128, reply bin (newest Reply frame)]]
 *
 * u128 = bin 16 big-endian; u64 in the compact form (below 2^32 a plain number, else WideUint).
 * The consensus core produces and consumes `ClientTableCheckpointEntry[]`; the state machine
 * carries the value opaquely. Decoding returns a reason, never throws.
 */
import type { ClientTableCheckpointEntry } from '@shoal/consensus';
import { type SnapshotValue, WideUint } from '@shoal/state';

function u64(value: bigint): number | WideUint {
  return value < 0x1_0000_0000n ? Number(value) : new WideUint(value);
}

function u128(value: bigint): Uint8Array {
  const out = new Uint8Array(16);
  let v = value;
  for (let i = 15; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

export function encodeClientTableSnapshot(entries: readonly ClientTableCheckpointEntry[] | null): SnapshotValue {
  if (entries === null) return null;
  const slots: SnapshotValue[] = [];
  for (const e of entries) {
    slots.push([e.slot, [u128(e.client), u64(e.epoch), e.userId, u64(e.watermark), u128(e.watermarkChecksum), e.reply.slice()]]);
  }
  return [slots];
}

function big(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v >= 0n ? v : null;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (v instanceof WideUint) return v.value;
  return null;
}

function wide(v: unknown): bigint | null {
  if (!(v instanceof Uint8Array) || v.length !== 16) return null;
  let out = 0n;
  for (const b of v) out = (out << 8n) | BigInt(b);
  return out;
}

export type ClientTableDecode =
  | { readonly ok: true; readonly entries: ClientTableCheckpointEntry[] | null }
  | { readonly ok: false; readonly reason: string };

export function decodeClientTableSnapshot(value: unknown): ClientTableDecode {
  if (value === null || value === undefined) return { ok: true, entries: null };
  if (!Array.isArray(value) || value.length !== 1 || !Array.isArray(value[0])) return { ok: false, reason: 'client_table_not_array' };
  const entries: ClientTableCheckpointEntry[] = [];
  const seenSlots = new Set<number>();
  const seenClients = new Set<bigint>();
  for (const slot of value[0] as unknown[]) {
    if (!Array.isArray(slot) || slot.length !== 2 || !Array.isArray(slot[1]) || slot[1].length !== 6) {
      return { ok: false, reason: 'client_table_slot_shape' };
    }
    const index = slot[0];
    const fields = slot[1] as unknown[];
    const client = wide(fields[0]);
    const epoch = big(fields[1]);
    const userId = fields[2];
    const watermark = big(fields[3]);
    const watermarkChecksum = wide(fields[4]);
    const reply = fields[5];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= 65536 || seenSlots.has(index)) {
      return { ok: false, reason: 'client_table_slot_index' };
    }
    if (client === null || client === 0n || seenClients.has(client)) return { ok: false, reason: 'client_table_client_id' };
    if (epoch === null || watermark === null || watermarkChecksum === null) return { ok: false, reason: 'client_table_field' };
    if (typeof userId !== 'number' || !Number.isInteger(userId) || userId < 0 || userId > 0xffff_ffff) {
      return { ok: false, reason: 'client_table_user_id' };
    }
    if (!(reply instanceof Uint8Array) || reply.length < 256) return { ok: false, reason: 'client_table_reply' };
    seenSlots.add(index);
    seenClients.add(client);
    entries.push({ slot: index, client, epoch, userId, watermark, watermarkChecksum, reply: reply.slice() });
  }
  return { ok: true, entries };
}
