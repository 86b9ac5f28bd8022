/** BLAKE3 (from @noble/hashes): cluster ids and the replica-handshake MAC. Not for bulk data. */
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';

export function blake3(input: Uint8Array, outputLength = 32): Uint8Array {
  return nobleBlake3(input, { dkLen: outputLength });
}

export function blake3Keyed(key: Uint8Array, input: Uint8Array, outputLength = 32): Uint8Array {
  if (key.length !== 32) throw new RangeError('blake3Keyed: key must be 32 bytes');
  return nobleBlake3(input, { key, dkLen: outputLength });
}

export function blake3DeriveKey(context: string, material: Uint8Array, outputLength = 32): Uint8Array {
  return nobleBlake3(material, { context: new TextEncoder().encode(context), dkLen: outputLength });
}
