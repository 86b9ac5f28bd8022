/**
 * The acceptor's side of the replica handshake (replication-semantics.md §3.7), sans-IO.
 *
 *   auth off:  await Hello ──checkHello──▶ established (nothing sent; any failure: silent close)
 *
 *   auth on:   await Hello ──checkHello──▶ send Challenge(nonce_a, mac_a, status 0) ──▶ await Finish
 *                 │ refused: a reject Challenge (status 1..3) only when the Hello's nonce is
 *                 │ non-zero; a zero nonce (AuthRequired) and everything else close silently
 *              await Finish ──checkFinish──▶ established    (wrong command / MAC: silent close)
 *
 * Every byte decision is the protocol package's (`checkHello`, `checkFinish`, the encoders);
 * this machine only sequences them and keeps the nonces. MACs verify against the current key or,
 * during a rotation, the previous one (`verifyHandshakeMac` inside the checks).
 */
import { assert } from '@shoal/stdx';
import {
  MacDirection,
  NONCE_SIZE,
  checkFinish,
  checkHello,
  encodeReplicaChallenge,
  encodeReplicaChallengeReject,
  handshakeMac,
  HANDSHAKE_LAYOUT,
  OFFSET_REPLICA,
  type HandshakeStatus,
} from '@shoal/protocol';
import { HandshakeFrameReader } from './handshake-reader.js';
import { NOTHING, refusalOfStatus, type HandshakeMachine, type HandshakeStep } from './handshake-step.js';
import type { ReplicaPlaneIdentity } from './settings.js';

export interface AcceptorHandshakeParams {
  readonly identity: ReplicaPlaneIdentity;
  /** The 32-byte TLS exporter (TLS mode, mode byte 1), or null in plaintext. */
  readonly tlsExporter: Uint8Array | null;
  /** `message_bus.max_message_size`: framing limit for handshake frames too. */
  readonly frameSizeMax: number;
  /** The OS CSPRNG (`crypto.randomBytes`); injectable for tests. */
  readonly randomBytes: (size: number) => Uint8Array;
}

type State = 'hello' | 'finish' | 'done';

const NONCE_AT = HANDSHAKE_LAYOUT.nonce.offset;

export class AcceptorHandshake implements HandshakeMachine {
  readonly #params: AcceptorHandshakeParams;
  readonly #reader: HandshakeFrameReader;
  #state: State = 'hello';
  #peer = -1;
  #nonceD: Uint8Array = new Uint8Array(NONCE_SIZE);
  #nonceA: Uint8Array = new Uint8Array(NONCE_SIZE);

  constructor(params: AcceptorHandshakeParams) {
    this.#params = params;
    this.#reader = new HandshakeFrameReader(params.frameSizeMax);
  }

  start(): HandshakeStep {
    return { kind: 'continue', send: NOTHING };
  }

  receive(chunk: Uint8Array): HandshakeStep {
    assert(this.#state !== 'done', 'AcceptorHandshake.receive after the outcome');
    this.#reader.push(chunk);
    const send: Uint8Array[] = [];
    for (let frame = this.#reader.next(); frame !== null; frame = this.#reader.next()) {
      const step = this.#state === 'hello' ? this.#onHello(frame, send) : this.#onFinish(frame, send);
      if (step !== null) {
        this.#state = 'done';
        return step;
      }
    }
    const error = this.#reader.error;
    if (error !== null) {
      this.#state = 'done';
      return { kind: 'refused', reason: error, send, statusByte: null };
    }
    return { kind: 'continue', send };
  }

  /** Step 2/3 of §3.7. Returns the outcome, or null to await the Finish. */
  #onHello(frame: Uint8Array, send: Uint8Array[]): HandshakeStep | null {
    const { identity } = this.#params;
    const authEnabled = identity.keys !== null;
    const verdict = checkHello(frame, 0, { cluster: identity.cluster, selfId: identity.selfId, replicaCount: identity.replicaCount, authEnabled });
    if (!verdict.ok) {
      if (verdict.sendReject) {
        send.push(encodeReplicaChallengeReject({ cluster: identity.cluster, replica: identity.selfId, status: verdict.status }));
      }
      return this.#refuse(verdict.status, send);
    }
    this.#peer = frame[OFFSET_REPLICA] as number;
    if (identity.keys === null) return { kind: 'established', peer: this.#peer, send, leftover: this.#reader.leftover() };
    this.#nonceD = frame.slice(NONCE_AT, NONCE_AT + NONCE_SIZE);
    this.#nonceA = this.#params.randomBytes(NONCE_SIZE);
    assert(this.#nonceA.length === NONCE_SIZE, 'randomBytes returned the wrong size');
    const macA = handshakeMac(identity.keys.current, {
      cluster: identity.cluster,
      dialerId: this.#peer,
      acceptorId: identity.selfId,
      nonceD: this.#nonceD,
      nonceA: this.#nonceA,
      tlsExporter: this.#params.tlsExporter,
      direction: MacDirection.Acceptor,
    });
    send.push(encodeReplicaChallenge({ cluster: identity.cluster, replica: identity.selfId, nonce: this.#nonceA, mac: macA }));
    this.#state = 'finish';
    return null;
  }

  /** Step 6 of §3.7: a Finish whose mac_d verifies installs; anything else closes silently. */
  #onFinish(frame: Uint8Array, send: Uint8Array[]): HandshakeStep {
    const { identity } = this.#params;
    assert(identity.keys !== null, 'a Finish is awaited only with auth enabled');
    const verdict = checkFinish(frame, 0, {
      keys: identity.keys,
      cluster: identity.cluster,
      dialerId: this.#peer,
      acceptorId: identity.selfId,
      nonceD: this.#nonceD,
      nonceA: this.#nonceA,
      tlsExporter: this.#params.tlsExporter,
    });
    if (!verdict.ok) return this.#refuse(verdict.status, send);
    return { kind: 'established', peer: this.#peer, send, leftover: this.#reader.leftover() };
  }

  #refuse(status: HandshakeStatus, send: Uint8Array[]): HandshakeStep {
    return { kind: 'refused', reason: refusalOfStatus(status), send, statusByte: status };
  }
}
