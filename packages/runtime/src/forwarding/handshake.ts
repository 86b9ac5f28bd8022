/**
 * The forwarding channel's handshake: the replica handshake's three frames and MAC transcript
 * (protocol `handshake.ts`), keyed with a key of its own so that neither plane's transcript
 * verifies on the other, and without the directional rule (every node forwards to every other).
 *
 *   forwarder (dialer, node d)                       primary (acceptor, node a), on its client port
 *     Hello (14) cluster, replica d, nonce_d  ─────▶  the connection's first frame: cluster must
 *                                                     match, d a roster id other than a, nonce ≠ 0
 *                ◀───── Challenge (15) nonce_a, mac_a = MAC(key, T(d, a, nonce_d, nonce_a, acceptor))
 *     checks mac_a, Finish (16) mac_d = MAC(key, T(…, dialer)) ─────▶ checks mac_d: channel up
 *
 *   key = BLAKE3 derive_key("shoal forward-channel v1 psk->mac-key", cluster.auth.shared_secret)
 *
 * Without `[cluster.auth]` there is no key: nodes neither dial nor accept channels, and a
 * partition request that reaches a non-primary is answered 58 as before (the channel lets a peer
 * act as any user; it is never open without the cluster secret).
 */
import {
  Command, HANDSHAKE_LAYOUT, MacDirection, NONCE_SIZE, OFFSET_CLUSTER, OFFSET_COMMAND, OFFSET_REPLICA, blake3DeriveKey,
  checkChallenge, checkFinish, encodeReplicaChallenge, encodeReplicaFinish, encodeReplicaHello, handshakeMac, type MacKeys,
} from '@shoal/protocol';
import { assert, readU128LE } from '@shoal/stdx';

export const CHANNEL_KEY_CONTEXT = 'shoal forward-channel v1 psk->mac-key';

const utf8 = new TextEncoder();
const NONCE_AT = HANDSHAKE_LAYOUT.nonce.offset;

/** The channel keys from `[cluster.auth]`, or null when auth is off (no forwarding). */
export function channelKeys(auth: { readonly enabled: boolean; readonly sharedSecret: string; readonly previousSharedSecret: string }): MacKeys | null {
  if (!auth.enabled || auth.sharedSecret.length === 0) return null;
  const current = blake3DeriveKey(CHANNEL_KEY_CONTEXT, utf8.encode(auth.sharedSecret), 32);
  if (auth.previousSharedSecret.length === 0) return { current };
  return { current, previous: blake3DeriveKey(CHANNEL_KEY_CONTEXT, utf8.encode(auth.previousSharedSecret), 32) };
}

export interface ChannelIdentity {
  readonly cluster: bigint;
  readonly self: number;
  readonly replicaCount: number;
  readonly keys: MacKeys;
}

/** True when `frame` is the Hello that opens a channel (a client never sends command 14). */
export function isChannelHello(frame: Uint8Array): boolean {
  return frame.length >= 256 && frame[OFFSET_COMMAND] === Command.ReplicaHello;
}

/** The dialer's side: `hello()`, then `onChallenge(frame)` gives the Finish or a refusal. */
export class ChannelDialerHandshake {
  readonly #id: ChannelIdentity;
  readonly #peer: number;
  readonly #nonceD: Uint8Array;

  constructor(id: ChannelIdentity, peer: number, randomBytes: (size: number) => Uint8Array) {
    this.#id = id;
    this.#peer = peer;
    this.#nonceD = randomBytes(NONCE_SIZE);
    assert(this.#nonceD.length === NONCE_SIZE, 'randomBytes returned the wrong size');
  }

  hello(): Uint8Array {
    return encodeReplicaHello({ cluster: this.#id.cluster, replica: this.#id.self, nonce: this.#nonceD });
  }

  /** The Finish to send, or null: the acceptor is not who the roster says (mac_a) or refused. */
  onChallenge(frame: Uint8Array): Uint8Array | null {
    const id = this.#id;
    const verdict = checkChallenge(frame, 0, {
      keys: id.keys, cluster: id.cluster, dialerId: id.self, acceptorId: this.#peer, nonceD: this.#nonceD, tlsExporter: null,
    });
    if (!verdict.ok) return null;
    const mac = handshakeMac(id.keys.current, {
      cluster: id.cluster, dialerId: id.self, acceptorId: this.#peer, nonceD: this.#nonceD,
      nonceA: frame.subarray(NONCE_AT, NONCE_AT + NONCE_SIZE), tlsExporter: null, direction: MacDirection.Dialer,
    });
    return encodeReplicaFinish({ cluster: id.cluster, replica: id.self, mac });
  }
}

/** The acceptor's side: `onHello(frame)` gives the Challenge, `onFinish(frame)` the peer id. */
export class ChannelAcceptorHandshake {
  readonly #id: ChannelIdentity;
  readonly #randomBytes: (size: number) => Uint8Array;
  #peer = -1;
  #nonceD: Uint8Array = new Uint8Array(NONCE_SIZE);
  #nonceA: Uint8Array = new Uint8Array(NONCE_SIZE);

  constructor(id: ChannelIdentity, randomBytes: (size: number) => Uint8Array) {
    this.#id = id;
    this.#randomBytes = randomBytes;
  }

  /** The Challenge to send, or null: refused (close without an answer). */
  onHello(frame: Uint8Array): Uint8Array | null {
    const id = this.#id;
    if (!isChannelHello(frame) || frame.length !== 256) return null;
    if (readU128LE(frame, OFFSET_CLUSTER) !== id.cluster) return null;
    const peer = frame[OFFSET_REPLICA] as number;
    if (peer >= id.replicaCount || peer === id.self) return null;
    const nonceD = frame.slice(NONCE_AT, NONCE_AT + NONCE_SIZE);
    if (nonceD.every((b) => b === 0)) return null;
    this.#peer = peer;
    this.#nonceD = nonceD;
    this.#nonceA = this.#randomBytes(NONCE_SIZE);
    assert(this.#nonceA.length === NONCE_SIZE, 'randomBytes returned the wrong size');
    const mac = handshakeMac(id.keys.current, {
      cluster: id.cluster, dialerId: peer, acceptorId: id.self, nonceD, nonceA: this.#nonceA, tlsExporter: null,
      direction: MacDirection.Acceptor,
    });
    return encodeReplicaChallenge({ cluster: id.cluster, replica: id.self, nonce: this.#nonceA, mac });
  }

  /** The dialer's replica id once its Finish verifies, else null. */
  onFinish(frame: Uint8Array): number | null {
    const id = this.#id;
    if (this.#peer < 0 || frame.length !== 256) return null;
    const verdict = checkFinish(frame, 0, {
      keys: id.keys, cluster: id.cluster, dialerId: this.#peer, acceptorId: id.self, nonceD: this.#nonceD, nonceA: this.#nonceA,
      tlsExporter: null,
    });
    return verdict.ok ? this.#peer : null;
  }
}
