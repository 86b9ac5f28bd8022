import { type Prng, assert } from '@shoal/stdx';
import { COMMANDS, CLIENT_COMMANDS } from '../../../src/client/index.js';
import { COMMAND_SAMPLES } from '../../../test/client-fixtures.js';
import { assertCanonical } from '../canonical.js';
import type { FuzzTarget } from '../target.js';

/**
 * Every command's response decoder (the payload after the result section). The first byte picks
 * the command. Replies are read as the reference's SDKs read them (trailing bytes ignored but for
 * SendMessages, GetStats' optional tail), so a decoded reply must have a canonical encoding that
 * is a fixed point (asserted: a mismatch is our bug and the harness reports it with the input).
 */
const target: FuzzTarget = {
  name: 'client-command-responses',
  seeds(_prng: Prng): Uint8Array[] {
    const seeds: Uint8Array[] = [];
    COMMANDS.forEach((info, index) => {
      const codec = CLIENT_COMMANDS.get(info.code);
      for (const response of COMMAND_SAMPLES.get(info.code)?.responses ?? []) {
        if (codec === undefined) continue;
        seeds.push(Uint8Array.of(index, ...codec.encodeResponse(response)));
      }
    });
    return seeds;
  },
  run(input: Uint8Array): string {
    if (input.length === 0) return 'empty';
    const info = COMMANDS[(input[0] as number) % COMMANDS.length];
    const codec = info === undefined ? undefined : CLIENT_COMMANDS.get(info.code);
    assert(info !== undefined && codec !== undefined, 'every command has a codec');
    const payload = input.subarray(1);
    const decoded = codec.decodeResponse(payload);
    if (!decoded.ok) return `${info.code}:fail:${decoded.reason}`;
    assertCanonical(`${info.name} response`, payload, decoded.value, (b) => codec.decodeResponse(b), (v) => codec.encodeResponse(v), true);
    return `${info.code}:ok:${payload.length}`;
  },
};

export default target;
