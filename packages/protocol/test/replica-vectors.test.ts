import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vectorsDir } from '../../../test/support/fixtures.js';
import type { VectorChecker } from '../scripts/vectors/outcome.js';
import { checkBlake3 } from '../scripts/vectors/check-blake3.js';
import { checkClusterId } from '../scripts/vectors/check-cluster-id.js';
import { checkHandshake } from '../scripts/vectors/check-handshake.js';
import { checkManifest, manifestRejections } from '../scripts/vectors/check-manifest.js';
import { checkReplicaFrames, replicaFrameRejections } from '../scripts/vectors/check-replica-frames.js';
import { checkRustTestValuesReplica } from '../scripts/vectors/check-rust-test-values-replica.js';

const CHECKERS: [string, VectorChecker][] = [
  ['replica_frames.json', checkReplicaFrames],
  ['manifest.json', checkManifest],
  ['handshake.json', checkHandshake],
  ['cluster_id.json', checkClusterId],
  ['blake3.json', checkBlake3],
  ['rust_test_values.json', checkRustTestValuesReplica],
];

const load = (file: string): unknown => JSON.parse(readFileSync(join(vectorsDir(), file), 'utf8'));

describe('replica-plane vectors', () => {
  for (const [file, checker] of CHECKERS) {
    it(file, () => {
      const outcomes = checker(load(file), file);
      expect(outcomes.length).toBeGreaterThan(0);
      const failed = outcomes.filter((o) => !o.ok).map((o) => `${o.id}: ${o.detail}`);
      expect(failed).toEqual([]);
    });
  }

  it('every negative frame and manifest is refused with a reason', () => {
    for (const r of [...replicaFrameRejections(load('replica_frames.json')), ...manifestRejections(load('manifest.json'))]) {
      expect(r.reason, `${r.name} (expected ${r.expect})`).not.toBeNull();
    }
  });

  it('checkers turn malformed documents into failed outcomes instead of throwing', () => {
    const broken = { frames: [{ name: 'x', hex: 'zz' }, 7], negative: [{ hex: '00' }], vectors: [{}], cases: [{ input_len: 'a' }] };
    for (const [file, checker] of CHECKERS) {
      const outcomes = checker(broken, file);
      expect(outcomes.every((o) => typeof o.ok === 'boolean')).toBe(true);
    }
    expect(checkReplicaFrames(broken, 'x').filter((o) => !o.ok).length).toBeGreaterThan(0);
    expect(checkRustTestValuesReplica(null, 'x')[0]?.ok).toBe(false);
  });

  it('checkers catch corrupted entries (they are not vacuous)', () => {
    const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
    const failures = (checker: VectorChecker, doc: unknown): number => checker(doc, 'x').filter((o) => !o.ok).length;

    const frames = clone(load('replica_frames.json')) as { frames: Record<string, unknown>[]; negative: Record<string, unknown>[] };
    const commit = frames.frames.find((f) => f['command'] === 9) as { fields: Record<string, unknown> };
    commit.fields['commit'] = '104';
    const hello = frames.frames.find((f) => f['command'] === 14 && f['handshake_inputs'] !== undefined) as { hex: string };
    hello.hex = hello.hex.slice(0, 256) + 'ff' + hello.hex.slice(258);
    (frames.negative[0] as Record<string, unknown>)['hex'] = (frames.frames.find((f) => f['command'] === 7) as { hex: string }).hex;
    expect(failures(checkReplicaFrames, frames)).toBe(3);

    const manifest = clone(load('manifest.json')) as { vectors: { entries: { frontier: string }[] }[] };
    (manifest.vectors[0]?.entries[0] as { frontier: string }).frontier = '193';
    expect(failures(checkManifest, manifest)).toBe(1);

    const handshake = clone(load('handshake.json')) as { vectors: { mac_hex: string }[] };
    (handshake.vectors[0] as { mac_hex: string }).mac_hex = '00'.repeat(32);
    expect(failures(checkHandshake, handshake)).toBe(1);

    const ids = clone(load('cluster_id.json')) as { vectors: { cluster_id_dec: string }[] };
    (ids.vectors[0] as { cluster_id_dec: string }).cluster_id_dec = '1';
    expect(failures(checkClusterId, ids)).toBe(1);

    const rust = clone(load('rust_test_values.json')) as Record<string, Record<string, unknown>>;
    (rust['offsets'] as Record<string, unknown>)['DoViewChangeHeader.nack_bitset'] = 225;
    (rust['forward_logout_outcomes'] as Record<string, unknown>)['Canceled'] = 5;
    expect(failures(checkRustTestValuesReplica, rust)).toBe(2);
  });
});
