import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { xxh3_64 } from '@shoal/protocol';
import { decodeStoreOffsetBody, encodeStoreOffsetBody } from '@shoal/state';
import { ConsumerOffsetStore, RealDisk } from '@shoal/storage';
import { measureCases, row } from '../measure.js';
import type { Suite } from '../suite.js';

const DIRTY = [1, 16, 128] as const;

/**
 * Consumer offsets (docs/state-partition.md, docs/storage-layout.md):
 *
 * 1. The offset-write body seal: a replica decodes a 161 body (and so checks its seal) at
 *    verify, at apply and when it queues the offset-file write. The sealed encode and decode,
 *    against the one XXH3-64 of the 13 bytes the seal costs each.
 * 2. What a commit frontier record costs the offsets on real files (a temp directory on the
 *    machine's disk): K offset files written since the last frontier (`store`, one 16-byte pwrite
 *    each) and `sync()` before the frontier may claim them (one fdatasync per file written).
 *    K = 1, 16, 128 consumers that committed an offset between two segment fdatasyncs.
 */
const suite: Suite = {
  name: 'consumer-offsets',
  description: 'offset-write body seal; offset files written and synced per frontier record (K dirty files)',
  run(settings) {
    const root = mkdtempSync(join(tmpdir(), 'shoal-bench-offsets-'));
    try {
      const consumer = { kind: 'consumer', key: 0x1234_5678 } as const;
      let offset = 0n;
      const body = encodeStoreOffsetBody({ consumer, offset: 42n });
      const inner = body.subarray(0, 13);
      const disk = new RealDisk();
      const syncCases = DIRTY.map((k) => {
        const store = new ConsumerOffsetStore(disk, join(root, `k${k}`), false);
        const loaded = store.load();
        if (!loaded.ok) throw new Error(loaded.error.message);
        for (let id = 0; id < k; id++) store.store('consumer', id, 0n); // the files exist: rewrites
        store.sync();
        return {
          name: `store ${k} + sync before a frontier`,
          op: () => {
            offset += 1n;
            for (let id = 0; id < k; id++) {
              const stored = store.store('consumer', id, offset);
              if (!stored.ok) throw new Error(stored.error.message);
            }
            const synced = store.sync();
            if (!synced.ok) throw new Error(synced.error.message);
            return synced.value;
          },
        };
      });
      const rows = measureCases([
        { name: 'encode (sealed)', op: () => encodeStoreOffsetBody({ consumer, offset: offset++ }) },
        {
          name: 'decode (seal checked)',
          op: () => {
            const decoded = decodeStoreOffsetBody(body);
            if (!decoded.ok) throw new Error(decoded.reason);
            return decoded.value.offset;
          },
        },
        { name: 'XXH3-64 of the 13-byte body', op: () => xxh3_64(inner) },
        ...syncCases,
      ], settings);
      const seal = row(rows, 'XXH3-64 of the 13-byte body').nsPerOp;
      const decode = row(rows, 'decode (seal checked)').nsPerOp;
      const notes = [`the seal is ${seal.toFixed(0)} ns of the ${decode.toFixed(0)} ns decode; three decodes per committed offset write`];
      for (const k of DIRTY) {
        const ns = row(rows, `store ${k} + sync before a frontier`).nsPerOp;
        notes.push(`${k} dirty offset file(s): ${(ns / 1e6).toFixed(2)} ms per frontier record (${(ns / k / 1000).toFixed(0)} µs per file)`);
      }
      return { rows, notes };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};

export default suite;
