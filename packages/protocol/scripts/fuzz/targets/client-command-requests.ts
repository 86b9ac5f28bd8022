import { type Prng, assert } from '@shoal/stdx';
import { COMMANDS, CLIENT_COMMANDS } from '../../../src/client/index.js';
import { COMMAND_SAMPLES } from '../../../test/client-fixtures.js';
import { assertCanonical } from '../canonical.js';
import type { FuzzTarget } from '../target.js';

/**
 * Every command's request decoder. The first input byte picks the command (index into COMMANDS,
 * modulo its length); the rest is the body. Decoders read as the reference does (trailing bytes
 * ignored, lenient flags), so an accepted body must have a canonical encoding that is a fixed
 * point (asserted: a mismatch is our bug and the harness reports it with the input).
 */
const target: FuzzTarget = {
  name: 'client-command-requests',
  seeds(_prng: Prng): Uint8Array[] {
    const seeds: Uint8Array[] = [];
    COMMANDS.forEach((info, index) => {
      const codec = CLIENT_COMMANDS.get(info.code);
      for (const request of COMMAND_SAMPLES.get(info.code)?.requests ?? []) {
        if (codec === undefined) continue;
        const body = codec.encodeRequest(request);
        seeds.push(Uint8Array.of(index, ...body));
      }
    });
    return seeds;
  },
  run(input: Uint8Array): string {
    if (input.length === 0) return 'empty';
    const info = COMMANDS[(input[0] as number) % COMMANDS.length];
    const codec = info === undefined ? undefined : CLIENT_COMMANDS.get(info.code);
    assert(info !== undefined && codec !== undefined, 'every command has a codec');
    const body = input.subarray(1);
    const decoded = codec.decodeRequest(body);
    if (!decoded.ok) return `${info.code}:fail:${decoded.reason}`;
    assertCanonical(`${info.name} request`, body, decoded.value, (b) => codec.decodeRequest(b), (v) => codec.encodeRequest(v));
    return `${info.code}:ok:${body.length}`;
  },
};

export default target;
