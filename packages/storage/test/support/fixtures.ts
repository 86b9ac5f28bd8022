/**
 * Test fixtures: stamped message batches, chained metadata prepares, temp directories.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Command,
  METADATA_GROUP,
  buildBatch,
  clusterIdFromName,
  encodeFrame,
  sealHeader,
  stampBatch,
  type BatchMessage,
} from '@shoal/protocol';
import { Prng, readU128LE } from '@shoal/stdx';

export const CLUSTER_NAME = 'storage-test-cluster';
export const CLUSTER_ID = clusterIdFromName(CLUSTER_NAME);

/** A stamped batch of `count` messages starting at `baseOffset`. */
export function makeBatch(baseOffset: number, count: number, payloadBytes = 64, baseTimestamp = 1_000_000 + baseOffset, seed = baseOffset): Uint8Array {
  const prng = new Prng(seed + 1);
  const messages: BatchMessage[] = Array.from({ length: count }, (_, i) => ({
    id: BigInt(baseOffset + i + 1),
    payload: prng.bytes(payloadBytes),
    originTimestamp: 1_700_000_000_000_000n + BigInt(i),
  }));
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(built.reason);
  const stamped = stampBatch(built.value, { partitionId: 1n, baseOffset: BigInt(baseOffset), baseTimestamp: BigInt(baseTimestamp) });
  if (!stamped.ok) throw new Error(stamped.reason);
  return built.value;
}

/** Consecutive batches: `sizes[i]` messages each, offsets contiguous from `start`. */
export function makeBatches(start: number, sizes: readonly number[], payloadBytes = 64, timestampOf?: (offset: number) => number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let offset = start;
  for (const count of sizes) {
    out.push(makeBatch(offset, count, payloadBytes, timestampOf === undefined ? 1_000_000 + offset : timestampOf(offset)));
    offset += count;
  }
  return out;
}

/** Chained metadata prepares for ops `from..to` (parent of `from` = `parent`). */
export function makePrepares(from: number, to: number, parent = 0n, bodyBytes = 40, commitLag = 1, seed = 1): Uint8Array[] {
  const prng = new Prng(seed);
  const out: Uint8Array[] = [];
  let previous = parent;
  for (let op = from; op <= to; op++) {
    const body = prng.bytes(bodyBytes + (op % 7));
    const frame = sealHeader(
      encodeFrame(
        Command.Prepare,
        {
          cluster: CLUSTER_ID,
          view: 1,
          replica: 0,
          client: 0x1234n,
          parent: previous,
          requestChecksum: 0n,
          op: BigInt(op),
          commit: BigInt(Math.max(0, op - commitLag)),
          timestamp: 1_000_000n * BigInt(op),
          request: BigInt(op),
          operation: 128,
          group: METADATA_GROUP,
          userId: 1,
        },
        body,
      ),
    );
    previous = readU128LE(frame, 0);
    out.push(frame);
  }
  return out;
}

export function checksumOf(frame: Uint8Array): bigint {
  return readU128LE(frame, 0);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `shoal-storage-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Unwraps an ok result or throws with its error. */
export function must<T>(result: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown }): T {
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.error, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
  return result.value;
}
