/**
 * The dialer's side of the replica handshake (replication-semantics.md §3.7), sans-IO.
 *
 *   auth off:  send Hello (nonce area zero) ──▶ established at once (reads nothing)
 *
 *   auth on:   send Hello(nonce_d) ──▶ await Challenge ──checkChallenge──▶ send Finish(mac_d) ──▶ established
 *                                        │ not a Challenge, any non-zero status byte (unknown
 *                                        │ values included), or a wrong mac_a: refused, close
 *
 * The Challenge's `cluster` field is not checked (the acceptor already compared ours), per §3.7.
 */
import { assert } from '@shoal/stdx';
import {
  MacDirection,
  NONCE_SIZE,
  HANDSHAKE_LAYOUT,
  OFFSET_COMMAND,
  checkChallenge,
  encodeReplicaFinish,
  encodeReplicaHello,
  handshakeMac,
  Command,
} from '@shoal/protocol';
import { HandshakeFrameReader } from './handshake-reader.js';
import { NOTHING, refusalOfStatus, type HandshakeMachine, type HandshakeStep } from './handshake-step.js';
import type { ReplicaPlaneIdentity } from './settings.js';

export interface DialerHandshakeParams {
  readonly identity: ReplicaPlaneIdentity;
  /** The replica being dialed (always greater than ours: directional dialing). */
  readonly peer: number;
  readonly tlsExporter: Uint8Array | null;
  readonly frameSizeMax: number;
  readonly randomBytes: (size: number) => Uint8Array;
}

const NONCE_AT = HANDSHAKE_LAYOUT.nonce.offset;
const STATUS_AT = HANDSHAKE_LAYOUT.status.offset;
const EMPTY = new Uint8Array(0);

export class DialerHandshake implements HandshakeMachine {
  readonly #params: DialerHandshakeParams;
  readonly #reader: HandshakeFrameReader;
  #nonceD: Uint8Array = new Uint8Array(NONCE_SIZE);
  #started = false;
  #done = false;

  constructor(params: DialerHandshakeParams) {
    assert(params.peer > params.identity.selfId, 'a replica dials only greater ids');
    this.#params = params;
    this.#reader = new HandshakeFrameReader(params.frameSizeMax);
  }

  start(): HandshakeStep {
    assert(!this.#started, 'DialerHandshake.start twice');
    this.#started = true;
    const { identity, peer } = this.#params;
    if (identity.keys === null) {
      this.#done = true;
      const hello = encodeReplicaHello({ cluster: identity.cluster, replica: identity.selfId });
      return { kind: 'established', peer, send: [hello], leftover: EMPTY };
    }
    this.#nonceD = this.#params.randomBytes(NONCE_SIZE);
    assert(this.#nonceD.length === NONCE_SIZE, 'randomBytes returned the wrong size');
    return { kind: 'continue', send: [encodeReplicaHello({ cluster: identity.cluster, replica: identity.selfId, nonce: this.#nonceD })] };
  }

  receive(chunk: Uint8Array): HandshakeStep {
    assert(this.#started && !this.#done, 'DialerHandshake.receive outside the Challenge wait');
    this.#reader.push(chunk);
    const frame = this.#reader.next();
    if (frame === null) {
      const error = this.#reader.error;
      if (error === null) return { kind: 'continue', send: NOTHING };
      this.#done = true;
      return { kind: 'refused', reason: error, send: NOTHING, statusByte: null };
    }
    this.#done = true;
    return this.#onChallenge(frame);
  }

  #onChallenge(frame: Uint8Array): HandshakeStep {
    const { identity, peer, tlsExporter } = this.#params;
    const keys = identity.keys;
    assert(keys !== null, 'a Challenge is awaited only with auth enabled');
    const statusByte = frame[OFFSET_COMMAND] === Command.ReplicaChallenge ? (frame[STATUS_AT] as number) : null;
    const verdict = checkChallenge(frame, 0, { keys, cluster: identity.cluster, dialerId: identity.selfId, acceptorId: peer, nonceD: this.#nonceD, tlsExporter });
    if (!verdict.ok) return { kind: 'refused', reason: refusalOfStatus(verdict.status), send: NOTHING, statusByte };
    const nonceA = frame.slice(NONCE_AT, NONCE_AT + NONCE_SIZE);
    const macD = handshakeMac(keys.current, {
      cluster: identity.cluster,
      dialerId: identity.selfId,
      acceptorId: peer,
      nonceD: this.#nonceD,
      nonceA,
      tlsExporter,
      direction: MacDirection.Dialer,
    });
    const finish = encodeReplicaFinish({ cluster: identity.cluster, replica: identity.selfId, mac: macD });
    return { kind: 'established', peer, send: [finish], leftover: this.#reader.leftover() };
  }
}
