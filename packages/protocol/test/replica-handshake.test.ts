import { describe, expect, it } from 'vitest';
import { AssertionError, toHex } from '@shoal/stdx';
import {
  Command,
  HandshakeStatus,
  MAC_TRANSCRIPT_SIZE,
  MacDirection,
  checkChallenge,
  checkFinish,
  checkHello,
  clusterIdFromName,
  constantTimeEqual,
  decodeHandshakeStatus,
  deriveMacKey,
  encodeReplicaChallenge,
  encodeReplicaChallengeReject,
  encodeReplicaFinish,
  encodeReplicaHello,
  handshakeMac,
  macTranscript,
  parseHandshakeFrame,
  validateHeader,
  verifyHandshakeMac,
  type MacTranscriptInput,
} from '../src/replica/index.js';

const cluster = clusterIdFromName('iggy-cluster');
const key = deriveMacKey('0123456789abcdef0123456789abcdef');
const nonceD = new Uint8Array(32).fill(0x11);
const nonceA = new Uint8Array(32).fill(0x22);
const base: Omit<MacTranscriptInput, 'direction'> = { cluster, dialerId: 0, acceptorId: 1, nonceD, nonceA, tlsExporter: null };

describe('key and MAC (§3.4, §3.5)', () => {
  it('derives the §3.4 example key', () => {
    expect(toHex(key)).toBe('39ec545024b097198cbf082b239525e97c0da3a60f3a18fd29f7d169de6a54be');
    expect(deriveMacKey(new TextEncoder().encode('0123456789abcdef0123456789abcdef'))).toEqual(key);
  });

  it('reproduces the §3.5 example MACs', () => {
    expect(toHex(handshakeMac(key, { ...base, direction: MacDirection.Acceptor }))).toBe('044b521980f2163017c3fa3730ab0587838513d52fe697b0c6f947a3e8d33b48');
    expect(toHex(handshakeMac(key, { ...base, direction: MacDirection.Dialer }))).toBe('a883c0ee40ebada280ceb697aba6e4555ccf902d9f033f2691ab08708cb2cd08');
  });

  it('lays the 143-byte transcript out field by field', () => {
    const exporter = new Uint8Array(32).fill(0xaa);
    const t = macTranscript({ ...base, dialerId: 3, acceptorId: 9, tlsExporter: exporter, direction: MacDirection.Acceptor });
    expect(t.length).toBe(MAC_TRANSCRIPT_SIZE);
    expect(new TextDecoder().decode(t.subarray(0, 27))).toBe('apache-iggy replica-auth v1');
    expect(toHex(t.subarray(27, 43))).toBe('21bb05c88727bab88d0ec27be8a72d46');
    expect([t[43], t[44]]).toEqual([3, 9]);
    expect(t.subarray(45, 77)).toEqual(nonceD);
    expect(t.subarray(77, 109)).toEqual(nonceA);
    expect(t[109]).toBe(1);
    expect(t.subarray(110, 142)).toEqual(exporter);
    expect(t[142]).toBe(2);
    const plain = macTranscript({ ...base, direction: MacDirection.Dialer });
    expect(plain[109]).toBe(0);
    expect(plain.subarray(110, 142).every((b) => b === 0)).toBe(true);
    expect(plain[142]).toBe(1);
  });

  it('guards its inputs (our bugs)', () => {
    expect(() => macTranscript({ ...base, nonceD: new Uint8Array(31), direction: 1 })).toThrow(AssertionError);
    expect(() => macTranscript({ ...base, tlsExporter: new Uint8Array(16), direction: 1 })).toThrow(AssertionError);
    expect(() => macTranscript({ ...base, dialerId: 256, direction: 1 })).toThrow(AssertionError);
    expect(() => handshakeMac(new Uint8Array(16), { ...base, direction: 1 })).toThrow(AssertionError);
  });

  it('verifies with the current key or, during rotation, the previous one', () => {
    const oldKey = deriveMacKey('old-secret-old-secret-old-secret-0');
    const input = { ...base, direction: MacDirection.Acceptor };
    const macOld = handshakeMac(oldKey, input);
    const macNew = handshakeMac(key, input);
    expect(verifyHandshakeMac({ current: key }, input, macNew)).toBe(true);
    expect(verifyHandshakeMac({ current: key }, input, macOld)).toBe(false);
    expect(verifyHandshakeMac({ current: key, previous: oldKey }, input, macOld)).toBe(true);
    expect(verifyHandshakeMac({ current: key, previous: oldKey }, input, macNew)).toBe(true);
    expect(verifyHandshakeMac({ current: key }, { ...input, direction: MacDirection.Dialer }, macNew)).toBe(false);
    expect(verifyHandshakeMac({ current: key }, { ...input, tlsExporter: new Uint8Array(32) }, macNew)).toBe(false);
    expect(verifyHandshakeMac({ current: key }, input, macNew.subarray(0, 31))).toBe(false);
  });

  it('compares in constant time per length', () => {
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array([1]), new Uint8Array([1, 0]))).toBe(false);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });
});

describe('statuses', () => {
  it('0 accepts; 2..5 reject by name; 1 and any other byte reject as UnknownCommand', () => {
    expect(decodeHandshakeStatus(0)).toEqual({ accepted: true, status: 0 });
    expect(decodeHandshakeStatus(1)).toEqual({ accepted: false, status: HandshakeStatus.UnknownCommand });
    for (const s of [2, 3, 4, 5]) expect(decodeHandshakeStatus(s)).toEqual({ accepted: false, status: s });
    for (const s of [6, 7, 100, 255]) expect(decodeHandshakeStatus(s)).toEqual({ accepted: false, status: HandshakeStatus.UnknownCommand });
  });
});

describe('frames (§3.3)', () => {
  it('Hello, Challenge, reject Challenge and Finish carry exactly their fields', () => {
    const hello = encodeReplicaHello({ cluster, replica: 0, nonce: nonceD });
    const challenge = encodeReplicaChallenge({ cluster, replica: 1, nonce: nonceA, mac: new Uint8Array(32).fill(7) });
    const reject = encodeReplicaChallengeReject({ cluster, replica: 1, status: HandshakeStatus.ClusterMismatch });
    const finish = encodeReplicaFinish({ cluster, replica: 0, mac: new Uint8Array(32).fill(9) });
    for (const f of [hello, challenge, reject, finish]) {
      expect(f.length).toBe(256);
      expect(f.subarray(0, 32).every((b) => b === 0)).toBe(true);
      expect(toHex(f.subarray(32, 48))).toBe('21bb05c88727bab88d0ec27be8a72d46');
      expect(new DataView(f.buffer).getUint32(48, true)).toBe(256);
      expect(new DataView(f.buffer).getUint32(52, true)).toBe(0);
      expect(f.subarray(193).every((b) => b === 0)).toBe(true);
    }
    expect(hello.subarray(128, 160)).toEqual(nonceD);
    expect(hello.subarray(160, 193).every((b) => b === 0)).toBe(true);
    expect(challenge[192]).toBe(0);
    expect(reject.subarray(128, 192).every((b) => b === 0)).toBe(true);
    expect(reject[192]).toBe(2);
    expect(finish.subarray(128, 160).every((b) => b === 0)).toBe(true);
    expect(finish.subarray(160, 192).every((b) => b === 9)).toBe(true);
    expect(encodeReplicaHello({ cluster, replica: 0 }).subarray(128).every((b) => b === 0)).toBe(true);
    expect(() => encodeReplicaChallengeReject({ cluster, replica: 1, status: 4 })).toThrow(AssertionError);
    expect(() => encodeReplicaChallengeReject({ cluster, replica: 1, status: 0 })).toThrow(AssertionError);
  });

  it('parse returns the fields in place and refuses non-handshake frames; validateHeader drops them', () => {
    const hello = encodeReplicaHello({ cluster, replica: 0, nonce: nonceD });
    const parsed = parseHandshakeFrame(hello);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.value.command).toBe(Command.ReplicaHello);
    expect(parsed.value.cluster).toBe(cluster);
    expect(parsed.value.nonce).toEqual(nonceD);
    expect(parseHandshakeFrame(hello.subarray(0, 255))).toEqual({ ok: false, reason: 'truncated_header' });
    const other = hello.slice();
    other[60] = 9;
    expect(parseHandshakeFrame(other)).toEqual({ ok: false, reason: 'not_handshake_command' });
    const small = hello.slice();
    small[49] = 0;
    expect(parseHandshakeFrame(small)).toEqual({ ok: false, reason: 'size_below_header' });
    expect(validateHeader(hello)).toBe('handshake_command');
  });
});

describe('protocol steps (§3.7)', () => {
  const acceptor = { cluster, selfId: 1, replicaCount: 3, authEnabled: true };

  it('a full authenticated handshake succeeds', () => {
    const hello = encodeReplicaHello({ cluster, replica: 0, nonce: nonceD });
    expect(checkHello(hello, 0, acceptor)).toEqual({ ok: true });
    const macA = handshakeMac(key, { ...base, direction: MacDirection.Acceptor });
    const challenge = encodeReplicaChallenge({ cluster, replica: 1, nonce: nonceA, mac: macA });
    const dialerCheck = { keys: { current: key }, cluster, dialerId: 0, acceptorId: 1, nonceD, tlsExporter: null };
    expect(checkChallenge(challenge, 0, dialerCheck)).toEqual({ ok: true });
    const macD = handshakeMac(key, { ...base, direction: MacDirection.Dialer });
    const finish = encodeReplicaFinish({ cluster, replica: 0, mac: macD });
    expect(checkFinish(finish, 0, { ...dialerCheck, nonceA })).toEqual({ ok: true });
  });

  it('acceptor checks in order: command, cluster, directional rule, then the nonce', () => {
    const hello = (fields: { cluster?: bigint; replica?: number; nonce?: Uint8Array }): Uint8Array =>
      encodeReplicaHello({ cluster: fields.cluster ?? cluster, replica: fields.replica ?? 0, nonce: fields.nonce ?? nonceD });
    const wrongCommand = hello({});
    wrongCommand[60] = Command.ReplicaFinish;
    expect(checkHello(wrongCommand, 0, acceptor)).toEqual({ ok: false, status: 1, sendReject: true });
    expect(checkHello(hello({ cluster: 5n }), 0, acceptor)).toEqual({ ok: false, status: 2, sendReject: true });
    expect(checkHello(hello({ replica: 1 }), 0, acceptor)).toEqual({ ok: false, status: 3, sendReject: true });
    expect(checkHello(hello({ replica: 2 }), 0, { ...acceptor, selfId: 2, replicaCount: 2 })).toEqual({ ok: false, status: 3, sendReject: true });
    const zero = new Uint8Array(32);
    expect(checkHello(hello({ nonce: zero }), 0, acceptor)).toEqual({ ok: false, status: 4, sendReject: false });
    // A zero nonce is not nackable: even a cluster mismatch closes silently.
    expect(checkHello(hello({ nonce: zero, cluster: 5n }), 0, acceptor)).toEqual({ ok: false, status: 2, sendReject: false });
    expect(checkHello(new Uint8Array(10), 0, acceptor)).toEqual({ ok: false, status: 1, sendReject: false });
  });

  it('auth disabled: a legacy Hello installs, failures close silently', () => {
    const off = { ...acceptor, authEnabled: false };
    expect(checkHello(encodeReplicaHello({ cluster, replica: 0 }), 0, off)).toEqual({ ok: true });
    expect(checkHello(encodeReplicaHello({ cluster: 1n, replica: 0, nonce: nonceD }), 0, off)).toEqual({ ok: false, status: 2, sendReject: false });
  });

  it('dialer: wrong command, reject statuses and bad MACs abort', () => {
    const dialerCheck = { keys: { current: key }, cluster, dialerId: 0, acceptorId: 1, nonceD, tlsExporter: null };
    const macA = handshakeMac(key, { ...base, direction: MacDirection.Acceptor });
    const good = encodeReplicaChallenge({ cluster, replica: 1, nonce: nonceA, mac: macA });
    const asHello = good.slice();
    asHello[60] = Command.ReplicaHello;
    expect(checkChallenge(asHello, 0, dialerCheck)).toEqual({ ok: false, status: 1, sendReject: false });
    for (const status of [1, 2, 3, 4, 5, 6, 200]) {
      const rejected = good.slice();
      rejected[192] = status;
      expect(checkChallenge(rejected, 0, dialerCheck)).toEqual({ ok: false, status: decodeHandshakeStatus(status).status, sendReject: false });
    }
    const badMac = good.slice();
    badMac[170] = (badMac[170] as number) ^ 1;
    expect(checkChallenge(badMac, 0, dialerCheck)).toEqual({ ok: false, status: 5, sendReject: false });
    // The Challenge's cluster field is not checked by the dialer.
    const otherCluster = encodeReplicaChallenge({ cluster: 1n, replica: 1, nonce: nonceA, mac: macA });
    expect(checkChallenge(otherCluster, 0, dialerCheck)).toEqual({ ok: true });
  });

  it('acceptor: a wrong Finish command or MAC closes; rotation accepts the previous key', () => {
    const oldKey = deriveMacKey('previous-secret-previous-secret-00');
    const check = { keys: { current: key, previous: oldKey }, cluster, dialerId: 0, acceptorId: 1, nonceD, nonceA, tlsExporter: null };
    const macOld = handshakeMac(oldKey, { ...base, direction: MacDirection.Dialer });
    expect(checkFinish(encodeReplicaFinish({ cluster, replica: 0, mac: macOld }), 0, check)).toEqual({ ok: true });
    expect(checkFinish(encodeReplicaFinish({ cluster, replica: 0, mac: macOld }), 0, { ...check, keys: { current: key } })).toEqual({ ok: false, status: 5, sendReject: false });
    const notFinish = encodeReplicaFinish({ cluster, replica: 0, mac: macOld });
    notFinish[60] = 5;
    expect(checkFinish(notFinish, 0, check)).toEqual({ ok: false, status: 1, sendReject: false });
    // The acceptor's own MAC direction does not pass as the dialer's.
    const macA = handshakeMac(key, { ...base, direction: MacDirection.Acceptor });
    expect(checkFinish(encodeReplicaFinish({ cluster, replica: 0, mac: macA }), 0, check)).toEqual({ ok: false, status: 5, sendReject: false });
  });
});
