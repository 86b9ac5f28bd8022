/**
 * Fuzz target: `decodeSuffix` (DoViewChange / StartView bodies, §5.4). The input is a whole
 * frame; it is decoded as given and with the body seal and frame seal recomputed, so body
 * mutations reach the entry rules (command, reserved bytes, op sequence, identities, timestamps,
 * hash chain).
 */
import { decodeSuffix, sealHeader, validateHeader } from '../../../src/replica/index.js';
import { HEADER_SIZE } from '../../../src/replica/header-layout.js';
import type { FuzzTarget } from '../target.js';
import { seedSuffixFrames } from './replica-header-validate.js';

function summary(input: Uint8Array): string {
  const decoded = decodeSuffix(input);
  if (!decoded.ok) return decoded.reason;
  return `ok[${decoded.value.map((e) => `${e.op}${e.blank ? 'b' : ''}${e.nack ? 'n' : ''}${e.present ? 'p' : ''}`).join(',')}]`;
}

const target: FuzzTarget = {
  name: 'replica-suffix-decode',
  seeds: seedSuffixFrames,
  run(input: Uint8Array): string {
    // Outcome class first: the decode after re-sealing (body mutations reach the entry rules).
    const raw = summary(input);
    if (input.length < HEADER_SIZE) return `${raw}:short`;
    const resealed = sealHeader(input.slice());
    return `${summary(resealed).replace(/\[.*$/, '')}:raw=${raw},sealed=${summary(resealed)},validate=${validateHeader(resealed) ?? 'ok'}`;
  },
};

export default target;
