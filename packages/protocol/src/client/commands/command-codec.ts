import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { type Decoded, fail, ok } from '../../codec/decoded.js';
import { decodeExact, decodePrefix, encodeWith } from '../../codec/body-codec.js';
import { type CommandCode, type CommandInfo, commandByCode } from '../command-code.js';

/**
 * One codec per command of commands.mdx. Requests are the body after the 256-byte header;
 * responses are the payload a client sees after the status check and after the result section is
 * stripped (result-framed operations). Request decoders read what they need from the start of the
 * body and ignore trailing bytes, as the reference server does (`decode_from`, codec.rs); bodies
 * that end in an options block consume everything, so there trailing bytes are the block. Response
 * decoders require exact consumption.
 *
 *   codec.encodeRequest(req)      → body bytes
 *   codec.decodeRequest(body)     → Decoded<Req>
 *   codec.encodeResponse(res)     → payload bytes
 *   codec.decodeResponse(payload) → Decoded<Res>
 *
 * Commands whose success reply has no body use `Res = null` (payload must be empty).
 */
export interface CommandCodec<Req, Res> {
  readonly code: CommandCode;
  readonly info: CommandInfo;
  /** False when a successful reply carries no payload. */
  readonly hasResponseBody: boolean;
  encodeRequest(request: Req): Uint8Array;
  decodeRequest(body: Uint8Array): Decoded<Req>;
  encodeResponse(response: Res): Uint8Array;
  decodeResponse(payload: Uint8Array): Decoded<Res>;
}

/** A codec whose types are erased (registry and fuzz dispatch). */
export type AnyCommandCodec = CommandCodec<unknown, unknown>;

export type EmptyRequest = Readonly<Record<string, never>>;

export interface BodyParts<T> {
  write(w: ByteWriter, value: T): void;
  read(r: ByteReader): T;
}

export const EMPTY_BODY: BodyParts<EmptyRequest> = {
  write: () => undefined,
  read: () => ({}),
};

export function defineCommand<Req, Res>(
  code: CommandCode, request: BodyParts<Req>, response: BodyParts<Res> | null,
): CommandCodec<Req, Res> {
  const info = commandByCode(code);
  assert(info !== null, `defineCommand: unknown code ${code}`);
  return Object.freeze({
    code,
    info,
    hasResponseBody: response !== null,
    encodeRequest: (req: Req) => encodeWith((w) => request.write(w, req)),
    decodeRequest: (body: Uint8Array) => decodePrefix(body, (r) => request.read(r)),
    encodeResponse: (res: Res) => {
      if (response === null) {
        assert(res === null, 'encodeResponse: this command has no response body');
        return new Uint8Array(0);
      }
      return encodeWith((w) => response.write(w, res));
    },
    decodeResponse: (payload: Uint8Array): Decoded<Res> => {
      if (response === null) return payload.length === 0 ? ok(null as Res) : fail('unexpected_response_body');
      return decodeExact(payload, (r) => response.read(r));
    },
  });
}

/**
 * A "get one" response: an empty payload means not found (null), as the pre-VSR server wrote it and
 * the Node SDK reads it ("does not exist" / null on an empty buffer).
 */
export function nullableWhenEmpty<T>(parts: BodyParts<T>): BodyParts<T | null> {
  return {
    write: (w, value) => {
      if (value !== null) parts.write(w, value);
    },
    read: (r) => (r.remaining === 0 && !r.failed ? null : parts.read(r)),
  };
}

/** A sequence of elements running to the end of the payload (no count prefix). */
export function sequenceToEnd<T>(parts: BodyParts<T>): BodyParts<T[]> {
  return {
    write: (w, values) => {
      for (const v of values) parts.write(w, v);
    },
    read: (r) => {
      const out: T[] = [];
      while (r.remaining > 0) out.push(parts.read(r));
      return out;
    },
  };
}

/** The raw payload, as a view (snapshot archive). */
export const RAW_BYTES: BodyParts<Uint8Array> = {
  write: (w, bytes) => {
    w.bytes(bytes);
  },
  read: (r) => r.rest(),
};
