import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromHex, type Prng } from '@shoal/stdx';
import { vectorsDir } from '../../../test/support/fixtures.js';
import { buildBatch, type BatchMessage } from '../src/batch/index.js';

export interface BatchVectorMessage {
  id: string;
  payload_hex: string;
  user_headers_hex: string;
  origin_timestamp: string;
}
export interface BatchVector {
  name: string;
  inputs: { messages: BatchVectorMessage[] };
  header: Record<string, string | number>;
  frames: Record<string, string | number>[];
  batch_checksum_input_hex: string;
  hex: string;
}
export interface BatchDoc {
  vectors: BatchVector[];
  negative: { name: string; hex: string; expect: string }[];
}

export function batchDoc(): BatchDoc {
  return JSON.parse(readFileSync(join(vectorsDir(), 'batch.json'), 'utf8')) as BatchDoc;
}

export function batchVector(name: string): BatchVector {
  const found = batchDoc().vectors.find((v) => v.name === name);
  if (found === undefined) throw new Error(`no batch vector ${name}`);
  return found;
}

export function vectorMessages(v: BatchVector): BatchMessage[] {
  return v.inputs.messages.map((m) => ({
    id: BigInt(m.id),
    payload: fromHex(m.payload_hex),
    userHeaders: fromHex(m.user_headers_hex),
    originTimestamp: BigInt(m.origin_timestamp),
  }));
}

/** Random messages: small payloads and user headers, timestamps within a u32 span. */
export function randomMessages(prng: Prng, count: number, maxPayload = 64): BatchMessage[] {
  const base = 1_700_000_000_000_000n + BigInt(prng.below(1_000_000));
  const out: BatchMessage[] = [];
  for (let i = 0; i < count; i++) {
    out.push({
      id: prng.u128(),
      payload: prng.bytes(prng.below(maxPayload + 1)),
      userHeaders: prng.chance(1, 3) ? prng.bytes(prng.below(24)) : new Uint8Array(0),
      originTimestamp: base + BigInt(prng.below(0x1000_0000)),
    });
  }
  return out;
}

export function mustBuild(messages: readonly BatchMessage[]): Uint8Array {
  const built = buildBatch(messages);
  if (!built.ok) throw new Error(`build failed: ${built.reason}`);
  return built.value;
}
