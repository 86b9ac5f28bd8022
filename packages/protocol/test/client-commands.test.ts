import { describe, expect, it } from 'vitest';
import { toHex } from '@shoal/stdx';
import {
  BATCH_PREFIX, CLIENT_COMMANDS, COMMANDS, CommandCode, createStreamCommand, encodeOptionsBlock, getStreamsCommand,
  peekBatchMessageCount, sendMessagesCommand, storeConsumerOffsetCommand, updatePermissionsCommand,
  createUserCommand, getUserCommand, sendMessagesMetadataLength, getStatsCommand, numericIdentifier, deleteTopicCommand,
} from '../src/client/index.js';
import { COMMAND_SAMPLES, SAMPLE_PERMISSIONS as COMMAND_SAMPLE_PERMISSIONS } from './client-fixtures.js';
import { readSpecFile } from '../../../test/support/fixtures.js';

const show = (value: unknown): string => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

const spec = readSpecFile('commands.mdx');

describe('command registry', () => {
  it('holds exactly the codes of commands.mdx, with their names', () => {
    const fromSpec = [...spec.matchAll(/^([A-Z_]+) = (\d+)/gm)].map((m) => [m[1], Number(m[2])] as const);
    expect(fromSpec.length).toBe(51);
    expect(new Set(COMMANDS.map((c) => c.code))).toEqual(new Set(fromSpec.map(([, code]) => code)));
    for (const [name, code] of fromSpec) expect(COMMANDS.find((c) => c.code === code)?.name, name).toBe(name);
  });

  it('has a codec and samples for every command', () => {
    for (const info of COMMANDS) {
      expect(CLIENT_COMMANDS.get(info.code)?.info, info.name).toBe(info);
      expect(COMMAND_SAMPLES.get(info.code), info.name).toBeDefined();
    }
  });
});

describe.each(COMMANDS.map((c) => [c.name, c.code] as const))('%s', (_name, code) => {
  const codec = CLIENT_COMMANDS.get(code);
  const samples = COMMAND_SAMPLES.get(code);
  if (codec === undefined || samples === undefined) throw new Error(`no codec or samples for ${code}`);

  it('request: encode → decode → deep equal, decode → encode → same bytes', () => {
    for (const request of samples.requests) {
      const body = codec.encodeRequest(request);
      const decoded = codec.decodeRequest(body);
      expect(decoded, show(decoded)).toMatchObject({ ok: true });
      if (!decoded.ok) continue;
      expect(decoded.value).toEqual(request);
      expect(toHex(codec.encodeRequest(decoded.value))).toBe(toHex(body));
    }
  });

  it('request: every strict prefix fails or decodes to a value encoded within it; trailing bytes are ignored as the reference ignores them', () => {
    for (const request of samples.requests) {
      const body = codec.encodeRequest(request);
      for (let cut = 0; cut < body.length; cut++) {
        const prefix = body.subarray(0, cut);
        const decoded = codec.decodeRequest(prefix);
        if (decoded.ok) expect(toHex(prefix).startsWith(toHex(codec.encodeRequest(decoded.value)))).toBe(true);
      }
      // One more byte: a fixed-shape body decodes to the same request (the reference's
      // `decode_from` ignores the rest); a body that ends in an options block reads it as part of
      // the block, which then fails (a lone 0x00 is no entry) or re-encodes to the longer body.
      const longer = new Uint8Array(body.length + 1);
      longer.set(body);
      const decoded = codec.decodeRequest(longer);
      if (decoded.ok) {
        const again = toHex(codec.encodeRequest(decoded.value));
        expect([toHex(body), toHex(longer)]).toContain(again);
      }
    }
  });

  it('response: encode → decode → deep equal, decode → encode → same bytes', () => {
    for (const response of samples.responses) {
      const payload = codec.encodeResponse(response);
      const decoded = codec.decodeResponse(payload);
      expect(decoded, show(decoded)).toMatchObject({ ok: true });
      if (!decoded.ok) continue;
      expect(decoded.value).toEqual(response);
      expect(toHex(codec.encodeResponse(decoded.value))).toBe(toHex(payload));
    }
  });

  it('response: truncations fail or re-encode consistently', () => {
    for (const response of samples.responses) {
      const payload = codec.encodeResponse(response);
      for (let cut = 0; cut < payload.length; cut++) {
        const decoded = codec.decodeResponse(payload.subarray(0, cut));
        if (decoded.ok) expect(toHex(codec.encodeResponse(decoded.value))).toBe(toHex(payload.subarray(0, cut)));
      }
    }
  });

  if (!codec.hasResponseBody) {
    it('a command without a response body rejects a non-empty payload', () => {
      expect(codec.decodeResponse(Uint8Array.of(0))).toEqual({ ok: false, reason: 'unexpected_response_body' });
    });
  }
});

describe('payload specifics', () => {
  it('CreateStream body is [name][options to end] and the options block is validated', () => {
    expect(toHex(createStreamCommand.encodeRequest({ name: 'test-stream', options: [] }))).toBe('0b746573742d73747265616d');
    const dup = encodeOptionsBlock([{ key: 'a', valueKind: 2, value: Uint8Array.of(1) }]);
    const body = new Uint8Array([1, 0x61, ...dup, ...dup]);
    expect(createStreamCommand.decodeRequest(body)).toEqual({ ok: false, reason: 'option_key_duplicate' });
  });

  it('SendMessages hands the batch back as a view and validates metadata_length', () => {
    const samples = COMMAND_SAMPLES.get(CommandCode.SendMessages);
    const request = samples?.requests[0] as Parameters<typeof sendMessagesCommand.encodeRequest>[0];
    const body = sendMessagesCommand.encodeRequest(request);
    const decoded = sendMessagesCommand.decodeRequest(body);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.batch.buffer).toBe(body.buffer);
    expect(decoded.value.batch.byteOffset).toBe(4 + sendMessagesMetadataLength(request));
    // A metadata_length shorter than the header it frames is refused; a longer one skips the
    // extra bytes, as the reference decodes the header from `body[4 .. 4 + metadata_length]`.
    const view = new DataView(body.buffer);
    const metadataLength = view.getUint32(0, true);
    view.setUint32(0, metadataLength - 1, true);
    expect(sendMessagesCommand.decodeRequest(body)).toEqual({ ok: false, reason: 'metadata_length_mismatch' });
    const padded = new Uint8Array(body.length + 3);
    padded.set(body.subarray(0, 4 + metadataLength));
    padded.set(body.subarray(4 + metadataLength), 4 + metadataLength + 3);
    new DataView(padded.buffer).setUint32(0, metadataLength + 3, true);
    const skipped = sendMessagesCommand.decodeRequest(padded);
    expect(skipped.ok && toHex(skipped.value.batch)).toBe(toHex(body.subarray(4 + metadataLength)));
  });

  it('SendMessages needs a whole batch header', () => {
    const request = { streamId: numericIdentifier(1), topicId: numericIdentifier(1), partitioning: { kind: 'balanced' as const }, messagesCount: 0, batch: new Uint8Array(256) };
    const body = sendMessagesCommand.encodeRequest(request);
    expect(sendMessagesCommand.decodeRequest(body.subarray(0, body.length - 1))).toEqual({ ok: false, reason: 'batch_header_truncated' });
    const batch = new Uint8Array(256);
    new DataView(batch.buffer).setUint32(BATCH_PREFIX.messageCountOffset, 3, true);
    expect(peekBatchMessageCount(batch)).toBe(3);
    expect(peekBatchMessageCount(batch.subarray(0, 255))).toBeNull();
  });

  it('StoreConsumerOffset requires the trailing ack byte and a known ack level', () => {
    const samples = COMMAND_SAMPLES.get(CommandCode.StoreConsumerOffset);
    const body = storeConsumerOffsetCommand.encodeRequest(samples?.requests[0] as Parameters<typeof storeConsumerOffsetCommand.encodeRequest>[0]);
    expect(toHex(body)).toBe('01010401000000' + '010401000000' + '010407000000' + '0101000000' + '0200000000000000' + '01');
    expect(storeConsumerOffsetCommand.decodeRequest(body.subarray(0, body.length - 1))).toEqual({ ok: false, reason: 'truncated_ack' });
    const bad = body.slice();
    bad[bad.length - 1] = 2;
    expect(storeConsumerOffsetCommand.decodeRequest(bad)).toEqual({ ok: false, reason: 'unknown_ack_level' });
  });

  it('conditional permissions: has_permissions = 0 ends without a length; only 1 carries permissions, as in the reference', () => {
    const body = updatePermissionsCommand.encodeRequest({ userId: numericIdentifier(5), permissions: null });
    expect(toHex(body)).toBe('01040500000000');
    const withFlag2 = body.slice();
    withFlag2[withFlag2.length - 1] = 2;
    expect(updatePermissionsCommand.decodeRequest(withFlag2)).toEqual({ ok: true, value: { userId: numericIdentifier(5), permissions: null } });
    const created = createUserCommand.encodeRequest({ username: 'u', password: 'p', status: 1, permissions: null, options: [] });
    expect(toHex(created)).toBe('01750170' + '01' + '00');
    // Status is read raw (the state machine stores an unknown code as Active).
    expect(createUserCommand.decodeRequest(Uint8Array.from([1, 0x75, 1, 0x70, 3, 0]))).toMatchObject({ ok: true, value: { status: 3 } });
    // A permissions length that disagrees with the encoded permissions is refused.
    const withPermissions = createUserCommand.encodeRequest({ username: 'u', password: 'p', status: 1, permissions: COMMAND_SAMPLE_PERMISSIONS, options: [] });
    const lying = withPermissions.slice();
    new DataView(lying.buffer).setUint32(6, new DataView(lying.buffer).getUint32(6, true) + 1, true);
    expect(createUserCommand.decodeRequest(lying).ok).toBe(false);
  });

  it('trailing bytes after a fixed-shape request are ignored (the Node SDK sends DeleteTopic with a legacy partitions_count)', () => {
    const sdkBody = Uint8Array.from([1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 3, 0, 0, 0]);
    expect(deleteTopicCommand.decodeRequest(sdkBody)).toEqual({ ok: true, value: { streamId: numericIdentifier(1), topicId: numericIdentifier(2) } });
  });

  it('user details: no permissions is four zero bytes, the flag form is 0x01 + len + bytes', () => {
    const user = { id: 1, createdAt: 0n, status: 1, username: 'a', options: [], permissions: null };
    const payload = getUserCommand.encodeResponse(user);
    // [id][created_at][status][username][options_len u32 = 0][no permissions: u32 0] (user_response.rs, get_user.rs)
    expect(toHex(payload)).toBe('01000000' + '0000000000000000' + '01' + '0161' + '00000000' + '00000000');
    expect(toHex(payload.subarray(payload.length - 4))).toBe('00000000');
    const padded = payload.slice();
    padded[padded.length - 1] = 1;
    expect(getUserCommand.decodeResponse(padded)).toEqual({ ok: false, reason: 'permissions_padding_nonzero' });
    expect(getUserCommand.decodeResponse(new Uint8Array(0))).toEqual({ ok: true, value: null });
  });

  it('GetStreams decodes the client_frames.json reply payload', () => {
    const payload = '0100000000401e18240a060001000000001000000000000003000000000000000b746573742d73747265616d0000000002000000f4411e18240a0600000000000000000000000000000000000000000002733200000000';
    const decoded = getStreamsCommand.decodeResponse(Uint8Array.from(payload.match(/../g)?.map((h) => parseInt(h, 16)) ?? []));
    expect(decoded.ok && decoded.value.map((s) => s.name)).toEqual(['test-stream', 's2']);
  });

  it('stats are strict: a missing tail is rejected', () => {
    const samples = COMMAND_SAMPLES.get(CommandCode.GetStats);
    const payload = getStatsCommand.encodeResponse(samples?.responses[0] as Parameters<typeof getStatsCommand.encodeResponse>[0]);
    expect(getStatsCommand.decodeResponse(payload.subarray(0, payload.length - 20)).ok).toBe(false);
  });

  it('hostile counts cannot outrun the buffer', () => {
    const payload = new Uint8Array(8);
    new DataView(payload.buffer).setUint32(0, 0xffff_ffff, true);
    expect(sendMessagesCommand.decodeResponse(payload)).toEqual({ ok: false, reason: 'count_exceeds_bytes_confirmations' });
  });
});
