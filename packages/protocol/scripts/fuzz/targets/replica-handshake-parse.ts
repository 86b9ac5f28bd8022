/**
 * Fuzz target: handshake frames. Each input is parsed and put through the acceptor's Hello
 * check, the dialer's Challenge check and the acceptor's Finish check with fixed keys and nonces.
 * Seeds are a real Hello / Challenge / Finish exchange, a reject Challenge and a legacy Hello.
 */
import type { Prng } from '@shoal/stdx';
import {
  checkChallenge,
  checkFinish,
  checkHello,
  clusterIdFromName,
  deriveMacKey,
  encodeReplicaChallenge,
  encodeReplicaChallengeReject,
  encodeReplicaFinish,
  encodeReplicaHello,
  handshakeMac,
  MacDirection,
  parseHandshakeFrame,
  type HandshakeVerdict,
} from '../../../src/replica/index.js';
import type { FuzzTarget } from '../target.js';

const cluster = clusterIdFromName('iggy-cluster');
const key = deriveMacKey('iggy-cluster-shared-secret-0123456789');
const previous = deriveMacKey('iggy-cluster-shared-secret-previous0');
const nonceD = new Uint8Array(32).map((_, i) => i);
const nonceA = new Uint8Array(32).map((_, i) => 0xa0 + i);
const base = { cluster, dialerId: 0, acceptorId: 1, nonceD, nonceA, tlsExporter: null };
const dialerCheck = { keys: { current: key, previous }, cluster, dialerId: 0, acceptorId: 1, nonceD, tlsExporter: null };

function verdict(v: HandshakeVerdict): string {
  return v.ok ? 'ok' : `${v.status}${v.sendReject ? 'r' : ''}`;
}

const target: FuzzTarget = {
  name: 'replica-handshake-parse',
  seeds(_prng: Prng): Uint8Array[] {
    return [
      encodeReplicaHello({ cluster, replica: 0, nonce: nonceD }),
      encodeReplicaHello({ cluster, replica: 0 }),
      encodeReplicaChallenge({ cluster, replica: 1, nonce: nonceA, mac: handshakeMac(key, { ...base, direction: MacDirection.Acceptor }) }),
      encodeReplicaChallengeReject({ cluster, replica: 1, status: 2 }),
      encodeReplicaFinish({ cluster, replica: 0, mac: handshakeMac(previous, { ...base, direction: MacDirection.Dialer }) }),
    ];
  },
  run(input: Uint8Array): string {
    const parsed = parseHandshakeFrame(input);
    const head = parsed.ok ? `ok:${parsed.value.command}/${parsed.value.replica}/${parsed.value.status}` : `${parsed.reason}:`;
    const hello = verdict(checkHello(input, 0, { cluster, selfId: 1, replicaCount: 3, authEnabled: true }));
    const challenge = verdict(checkChallenge(input, 0, dialerCheck));
    const finish = verdict(checkFinish(input, 0, { ...dialerCheck, nonceA }));
    return `${head}|hello:${hello}|challenge:${challenge}|finish:${finish}`;
  },
};

export default target;
