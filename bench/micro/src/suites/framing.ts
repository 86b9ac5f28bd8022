import { FrameDecoder } from '@shoal/protocol';
import { measureCases, row, throughputRatio, type BenchCase } from '../measure.js';
import type { BenchRow, Suite } from '../suite.js';

const FRAME = 64 * 1024;
const FRAMES = 64;
const TARGET_RATIO = 0.5;

/**
 * The frame decoder over a stream of 64 KiB frames (4 MiB), against `Buffer.copy` of the same
 * chunks into one preallocated buffer (the cost of touching every byte once). Three chunkings:
 * - aligned: one frame per 64 KiB chunk, every frame a view (no copy);
 * - misaligned: 64 KiB chunks shifted by 1,000 bytes, EVERY frame straddles two chunks and is
 *   assembled (the worst case: every byte copied, like the baseline);
 * - coalesced: 1 MiB chunks shifted by 1,000 bytes, 15 of 16 frames are views.
 */
const suite: Suite = {
  name: 'framing',
  description: `frame decoder, ${FRAMES} × 64 KiB frames, vs Buffer.copy of the same chunks`,
  run(settings) {
    const stream = Buffer.alloc(FRAMES * FRAME);
    for (let i = 0; i < FRAMES; i++) {
      stream.writeUInt32LE(FRAME, i * FRAME + 48);
      stream[i * FRAME + 60] = 6;
      for (let k = 256; k < FRAME; k += 4096) stream[i * FRAME + k] = (i + k) & 0xff;
    }
    const chunkings: [string, Buffer[]][] = [
      ['aligned 64 KiB', cut(stream, 0, FRAME)],
      ['misaligned 64 KiB', cut(stream, 1000, FRAME)],
      ['coalesced 1 MiB', cut(stream, 1000, 1 << 20)],
    ];
    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const [name, chunks] of chunkings) {
      const decoder = new FrameDecoder();
      const target = Buffer.allocUnsafe(Math.max(...chunks.map((c) => c.length)));
      const decode = (): number => {
        let commands = 0;
        for (const chunk of chunks) {
          decoder.push(chunk);
          for (let f = decoder.pull(); f !== null; f = decoder.pull()) commands += f[60] as number;
        }
        if (commands !== FRAMES * 6) throw new Error(`decoded ${commands / 6} frames`);
        return commands;
      };
      const copy = (): number => {
        let copied = 0;
        for (const chunk of chunks) copied += chunk.copy(target, 0);
        return copied;
      };
      const cases: BenchCase[] = [
        { name: `decoder    ${name}`, op: decode, bytesPerOp: stream.length },
        { name: `Buffer.copy ${name}`, op: copy, bytesPerOp: stream.length },
      ];
      const measured = measureCases(cases, settings);
      rows.push(...measured);
      const ratio = throughputRatio(row(measured, `decoder    ${name}`), row(measured, `Buffer.copy ${name}`));
      const verdict = name.startsWith('misaligned') ? ` (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'})` : '';
      notes.push(`${name}: decoder / Buffer.copy throughput = ${ratio.toFixed(2)}${verdict}`);
    }
    return { rows, notes };
  },
};

function cut(stream: Buffer, first: number, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  if (first > 0) {
    chunks.push(stream.subarray(0, first));
    at = first;
  }
  for (; at < stream.length; at += size) chunks.push(stream.subarray(at, Math.min(stream.length, at + size)));
  return chunks;
}

export default suite;
