import { describe, expect, it } from 'vitest';
import { FrameDecoder, MacDirection, deriveMacKey, encodeReplicaFinish, handshakeMac, parseHandshakeFrame } from '@shoal/protocol';
import { Prng, concatBytes } from '@shoal/stdx';
import {
  CHANNEL_HEADER_SIZE, decodeForwardReply, decodeForwardRequest, encodeForwardReplyHeader, encodeForwardRequestHeader,
} from '../src/forwarding/frames.js';
import { ChannelAcceptorHandshake, ChannelDialerHandshake, channelKeys, isChannelHello } from '../src/forwarding/handshake.js';

const SECRET = 'forwarding-test-secret-0123456789abcdefghij';
const auth = (sharedSecret: string, previousSharedSecret = '') => ({ enabled: true, sharedSecret, previousSharedSecret });

function identity(self: number, secret = SECRET, previous = '') {
  const keys = channelKeys(auth(secret, previous));
  if (keys === null) throw new Error('no keys');
  return { cluster: 0x1234n, self, replicaCount: 3, keys };
}

function random(seed: number): (size: number) => Uint8Array {
  const prng = new Prng(seed);
  return (size) => Uint8Array.from({ length: size }, () => prng.below(256));
}

const join = concatBytes;

describe('forwarding channel frames', () => {
  const header = Uint8Array.from({ length: 256 }, (_, i) => (i * 7) & 0xff);
  const body = Uint8Array.of(1, 2, 3, 4, 5);
  const fields = { forwardId: 99n, route: 2, userId: 7, group: (3n << 32n) | (1n << 20n) | 2n, metadataOp: 1n << 40n, fenceOp: 12n, hostValue: (1n << 32n) | 5n };

  it('a ForwardRequest round-trips through the client port\'s frame decoder', () => {
    const bytes = join([encodeForwardRequestHeader(fields, header, body), header, body]);
    const decoder = new FrameDecoder({ frameSizeMax: 4096 });
    expect(decoder.push(bytes)).toBe(true);
    const frame = decoder.pull();
    expect(frame).not.toBeNull();
    const decoded = decodeForwardRequest(frame as Uint8Array);
    expect(decoded).toMatchObject(fields);
    expect([...(decoded?.header ?? [])]).toEqual([...header]);
    expect([...(decoded?.body ?? [])]).toEqual([...body]);
  });

  it('a ForwardReply round-trips with and without a frame', () => {
    const reply = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    const withFrame = decodeForwardReply(join([encodeForwardReplyHeader(5n, reply, true), reply]));
    expect(withFrame?.forwardId).toBe(5n);
    expect(withFrame?.completes).toBe(true);
    expect(withFrame?.frame?.length).toBe(300);
    expect(decodeForwardReply(encodeForwardReplyHeader(6n, null, false))).toEqual({ forwardId: 6n, frame: null, completes: false });
  });

  it('malformed frames decode as null (the channel closes)', () => {
    const request = join([encodeForwardRequestHeader(fields, header, body), header, body]);
    expect(decodeForwardRequest(request.subarray(0, request.length - 1))).toBeNull(); // size mismatch
    expect(decodeForwardRequest(request.subarray(0, CHANNEL_HEADER_SIZE + 10))).toBeNull(); // no client header
    expect(decodeForwardReply(request)).toBeNull(); // wrong command
    const lying = encodeForwardReplyHeader(7n, null, true);
    expect(decodeForwardReply(join([lying, Uint8Array.of(1)]))).toBeNull(); // flags say no frame, bytes follow
  });
});

describe('forwarding channel handshake', () => {
  function run(dialerSecret: string, acceptorSecret: string, previous = ''): { finished: boolean; peer: number | null } {
    const dialer = new ChannelDialerHandshake(identity(0, dialerSecret), 2, random(1));
    const acceptor = new ChannelAcceptorHandshake(identity(2, acceptorSecret, previous), random(2));
    const hello = dialer.hello();
    expect(isChannelHello(hello)).toBe(true);
    const challenge = acceptor.onHello(hello);
    if (challenge === null) return { finished: false, peer: null };
    const finish = dialer.onChallenge(challenge);
    if (finish === null) return { finished: false, peer: null };
    return { finished: true, peer: acceptor.onFinish(finish) };
  }

  it('peers with the same secret establish, in either direction of the replica ids', () => {
    expect(run(SECRET, SECRET)).toEqual({ finished: true, peer: 0 });
    const dialer = new ChannelDialerHandshake(identity(2), 1, random(3));
    const acceptor = new ChannelAcceptorHandshake(identity(1), random(4));
    const finish = dialer.onChallenge(acceptor.onHello(dialer.hello()) as Uint8Array);
    expect(acceptor.onFinish(finish as Uint8Array)).toBe(2);
  });

  it('a dialer refuses an acceptor without the secret, and the reverse', () => {
    expect(run(SECRET, `${SECRET}-other`)).toEqual({ finished: false, peer: null });
  });

  it('the previous secret still verifies during a rotation', () => {
    const dialer = new ChannelDialerHandshake(identity(0, SECRET), 2, random(5));
    const acceptor = new ChannelAcceptorHandshake(identity(2, 'the-new-secret-0123456789abcdefghijklmn', SECRET), random(6));
    const challenge = acceptor.onHello(dialer.hello()) as Uint8Array;
    // mac_a is made with the acceptor's current key: a dialer on the old key refuses it…
    expect(dialer.onChallenge(challenge)).toBeNull();
    // …but a Finish made with the old key is accepted by the rotating acceptor.
    const keys = channelKeys(auth(SECRET));
    const parsed = parseHandshakeFrame(challenge);
    if (keys === null || !parsed.ok) throw new Error('setup');
    const helloFrame = new ChannelDialerHandshake(identity(0, SECRET), 2, random(5)).hello();
    const mac = handshakeMac(keys.current, {
      cluster: 0x1234n, dialerId: 0, acceptorId: 2, nonceD: helloFrame.subarray(128, 160), nonceA: parsed.value.nonce, tlsExporter: null,
      direction: MacDirection.Dialer,
    });
    expect(acceptor.onFinish(encodeReplicaFinish({ cluster: 0x1234n, replica: 0, mac }))).toBe(0);
  });

  it('a replica-plane MAC never opens a channel (domain-separated key)', () => {
    const dialer = new ChannelDialerHandshake(identity(0), 2, random(7));
    const acceptor = new ChannelAcceptorHandshake(identity(2), random(8));
    const hello = dialer.hello();
    const challenge = acceptor.onHello(hello) as Uint8Array;
    const parsed = parseHandshakeFrame(challenge);
    if (!parsed.ok) throw new Error('setup');
    const replicaKey = deriveMacKey(SECRET);
    const mac = handshakeMac(replicaKey, {
      cluster: 0x1234n, dialerId: 0, acceptorId: 2, nonceD: hello.subarray(128, 160), nonceA: parsed.value.nonce, tlsExporter: null,
      direction: MacDirection.Dialer,
    });
    expect(acceptor.onFinish(encodeReplicaFinish({ cluster: 0x1234n, replica: 0, mac }))).toBeNull();
  });

  it('refuses a Hello from another cluster, from itself, from outside the roster, or with a zero nonce', () => {
    const acceptor = (): ChannelAcceptorHandshake => new ChannelAcceptorHandshake(identity(2), random(9));
    const other = new ChannelDialerHandshake({ ...identity(0), cluster: 0x9999n }, 2, random(10)).hello();
    expect(acceptor().onHello(other)).toBeNull();
    expect(acceptor().onHello(new ChannelDialerHandshake(identity(2), 2, random(11)).hello())).toBeNull();
    expect(acceptor().onHello(new ChannelDialerHandshake({ ...identity(0), self: 5 }, 2, random(12)).hello())).toBeNull();
    expect(acceptor().onHello(new ChannelDialerHandshake(identity(0), 2, (n) => new Uint8Array(n)).hello())).toBeNull();
    expect(acceptor().onFinish(new Uint8Array(256))).toBeNull(); // a Finish before any Hello
  });

  it('no channel keys without [cluster.auth]', () => {
    expect(channelKeys({ enabled: false, sharedSecret: SECRET, previousSharedSecret: '' })).toBeNull();
  });
});
