import {
  CommandCode, EvictionReason, Operation, encodeEvictionHeader, encodeLoginReply, encodeReplyFrame, encodeResultRejection,
  encodeResultSuccess,
} from '@shoal/protocol';
import { Prng } from '@shoal/stdx';
import { describe, expect, it } from 'vitest';
import {
  Session, type SessionEvent, ShoalClosedError, ShoalConnectionLostError, ShoalEvictionError, ShoalProtocolError,
  ShoalResponseError,
} from '../src/index.js';

const EMPTY = new Uint8Array(0);

function session(options: { windowMax?: number; replayAttemptsMax?: number; clock?: () => bigint } = {}): Session {
  const prng = new Prng(7);
  return new Session({ random: { u128: () => prng.u128() }, ...options });
}

interface Sent {
  readonly request: bigint;
  readonly operation: number;
  readonly session: bigint;
  readonly client: bigint;
  readonly timestamp: bigint;
  readonly frame: Uint8Array;
}

function drain(s: Session): Sent[] {
  return s.drain().frames.map(({ frame }) => {
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    return {
      request: view.getBigUint64(168, true),
      operation: view.getUint8(176),
      session: view.getBigUint64(184, true),
      client: view.getBigUint64(128, true) | (view.getBigUint64(136, true) << 64n),
      timestamp: view.getBigUint64(160, true),
      frame,
    };
  });
}

function reply(sent: Sent, body: Uint8Array = EMPTY, status = 0, timestamp = sent.timestamp): Uint8Array {
  return encodeReplyFrame({ client: sent.client, request: sent.request, operation: sent.operation, timestamp, status }, body);
}

function login(s: Session, epoch = 9n): void {
  s.register({ kind: 'password', username: 'u', password: 'p' });
  const [sent] = drain(s);
  if (sent === undefined) throw new Error('register not sent');
  s.receive(reply(sent, encodeResultSuccess(encodeLoginReply({ userId: 3, session: epoch, serverProtocolVersion: 11264, serverVersion: '0.11.0' }))));
}

const call = (code: number): { code: number; body: Uint8Array } => ({ code, body: EMPTY });

describe('request numbering (framing.mdx)', () => {
  it('metadata ops take the counter and advance it; partition and non-replicated ops send it unchanged', () => {
    const s = session();
    login(s);
    const order = [CommandCode.Ping, CommandCode.CreateStream, CommandCode.SendMessages, CommandCode.CreateTopic, CommandCode.PollMessages, CommandCode.StoreConsumerOffset, CommandCode.DeleteSegments, CommandCode.GetStreams];
    const numbers: bigint[] = [];
    for (const code of order) {
      s.submit(call(code));
      const [sent] = drain(s);
      if (sent === undefined) throw new Error(`${code} not sent`);
      numbers.push(sent.request);
      expect(sent.session).toBe(9n);
      s.receive(reply(sent, sent.operation >= 128 && sent.operation <= 149 ? encodeResultSuccess() : EMPTY));
    }
    expect(numbers).toEqual([1n, 1n, 2n, 2n, 3n, 3n, 3n, 4n]);
    expect(s.counter).toBe(4n);
  });

  it('Register sends request 0 / session 0; Logout advances; each registration mints a fresh client id', () => {
    const s = session();
    s.submit(call(CommandCode.Ping));
    const [ping] = drain(s);
    s.register({ kind: 'token', token: 'secret' });
    expect(drain(s)).toEqual([]);
    if (ping === undefined) throw new Error('no ping');
    s.receive(reply(ping));
    const [register] = drain(s);
    expect(register).toMatchObject({ request: 0n, session: 0n, operation: Operation.Register, client: ping.client });
    if (register === undefined) throw new Error('no register');
    s.receive(reply(register, encodeResultSuccess(encodeLoginReply({ userId: 1, session: 5n, serverProtocolVersion: 11264, serverVersion: 'x' }))));
    s.submit(call(CommandCode.CreateStream));
    const [create] = drain(s);
    if (create === undefined) throw new Error('no create');
    s.receive(reply(create, encodeResultSuccess()));
    s.submit(call(CommandCode.LogoutUser));
    const [logout] = drain(s);
    expect(logout).toMatchObject({ request: 2n, operation: Operation.Logout, session: 5n });
    if (logout === undefined) throw new Error('no logout');
    s.receive(reply(logout));
    expect(s.state).toBe('unregistered');
    login(s, 11n);
    expect(s.clientId).not.toBe(ping.client);
    s.submit(call(CommandCode.CreateStream));
    expect(drain(s)[0]).toMatchObject({ request: 1n, session: 11n });
  });

  it('a second registration on the same session mints a new id and restarts the counter', () => {
    const s = session();
    login(s);
    const first = s.clientId;
    s.submit(call(CommandCode.CreateStream));
    const [create] = drain(s);
    if (create === undefined) throw new Error('no create');
    s.receive(reply(create, encodeResultSuccess()));
    login(s, 12n);
    expect(s.clientId).not.toBe(first);
    expect(s.counter).toBe(1n);
  });
});

describe('dispatch gating', () => {
  it('one metadata request in flight at a time; dispatch order is submission order', () => {
    const s = session();
    login(s);
    s.submit(call(CommandCode.CreateStream));
    s.submit(call(CommandCode.Ping));
    s.submit(call(CommandCode.CreateTopic));
    s.submit(call(CommandCode.Ping));
    const first = drain(s);
    expect(first.map((f) => f.operation)).toEqual([Operation.CreateStream, Operation.NonReplicated]);
    expect(s.queuedCount).toBe(2);
    s.receive(reply(first[0] as Sent, encodeResultSuccess()));
    const second = drain(s);
    expect(second.map((f) => [f.operation, f.request])).toEqual([[Operation.CreateTopic, 2n], [Operation.NonReplicated, 3n]]);
  });

  it('the window bounds in-flight frames', () => {
    const s = session({ windowMax: 3 });
    login(s);
    for (let i = 0; i < 5; i++) s.submit(call(CommandCode.Ping));
    const first = drain(s);
    expect(first).toHaveLength(3);
    s.receive(reply(first[0] as Sent));
    expect(drain(s)).toHaveLength(1);
    expect(s.inFlightCount).toBe(3);
  });

  it('Register and Logout go alone', () => {
    const s = session();
    login(s);
    s.submit(call(CommandCode.Ping));
    s.submit(call(CommandCode.LogoutUser));
    s.submit(call(CommandCode.Ping));
    const [ping] = drain(s);
    expect(drain(s)).toEqual([]);
    s.receive(reply(ping as Sent));
    const [logout] = drain(s);
    expect(logout?.operation).toBe(Operation.Logout);
    expect(drain(s)).toEqual([]);
    s.receive(reply(logout as Sent));
    expect(drain(s)[0]?.session).toBe(0n);
  });
});

describe('replies', () => {
  it('correlates replies sharing a request number by the echoed timestamp, out of order', () => {
    let t = 100n;
    const s = session({ clock: () => t++ });
    login(s);
    for (let i = 0; i < 3; i++) s.submit(call(CommandCode.GetStreams));
    const sent = drain(s);
    expect(new Set(sent.map((x) => x.request)).size).toBe(1);
    const order = [2, 0, 1];
    const tickets: number[] = [];
    for (const i of order) {
      const events = s.receive(reply(sent[i] as Sent, Uint8Array.of(i)));
      const done = events.find((e) => e.kind === 'reply');
      if (done?.kind === 'reply') tickets.push(done.payload[0] as number);
    }
    expect(tickets).toEqual(order);
  });

  it('result section rejections and statuses become ShoalResponseError; a malformed section a ShoalProtocolError', () => {
    const s = session();
    login(s);
    s.submit(call(CommandCode.CreateStream));
    const [create] = drain(s);
    const [rejected] = s.receive(reply(create as Sent, encodeResultRejection(1012)));
    expect(rejected).toMatchObject({ kind: 'failed', error: { code: 1012, source: 'result_section' } });
    expect((rejected as { error: unknown }).error).toBeInstanceOf(ShoalResponseError);
    s.submit(call(CommandCode.CreateTopic));
    const [topic] = drain(s);
    const [denied] = s.receive(reply(topic as Sent, EMPTY, 41));
    expect(denied).toMatchObject({ kind: 'failed', error: { code: 41, source: 'status' } });
    s.submit(call(CommandCode.DeleteStream));
    const [del] = drain(s);
    const [malformed] = s.receive(reply(del as Sent, Uint8Array.of(1, 0, 0, 0)));
    expect((malformed as { error: unknown }).error).toBeInstanceOf(ShoalProtocolError);
  });

  it('drops replies for another client id and unmatched replies', () => {
    const s = session();
    login(s);
    s.submit(call(CommandCode.Ping));
    const [ping] = drain(s);
    if (ping === undefined) throw new Error('no ping');
    expect(s.receive(encodeReplyFrame({ client: ping.client + 1n, request: ping.request, operation: 2 }, EMPTY))).toEqual([{ kind: 'dropped', reason: 'foreign_client' }]);
    expect(s.receive(encodeReplyFrame({ client: ping.client, request: 77n, operation: 2 }, EMPTY))).toEqual([{ kind: 'dropped', reason: 'unmatched' }]);
    expect(s.inFlightCount).toBe(1);
  });

  it('accepts a login reply without the result section too (framing.mdx wording)', () => {
    for (const userId of [0, 1, 7]) {
      const s = session();
      s.register({ kind: 'password', username: 'u', password: 'p' });
      const [register] = drain(s);
      const events = s.receive(reply(register as Sent, encodeLoginReply({ userId, session: 33n, serverProtocolVersion: 11264, serverVersion: '0.11.0' })));
      expect(events.map((e) => e.kind)).toEqual(['bound', 'reply']);
      expect(s.epoch).toBe(33n);
      expect(s.userId).toBe(userId);
    }
  });

  it('an empty login reply fails the registration', () => {
    const s = session();
    s.register({ kind: 'password', username: 'u', password: 'p' });
    const [register] = drain(s);
    const [failed] = s.receive(reply(register as Sent));
    expect((failed as { error: unknown }).error).toBeInstanceOf(ShoalProtocolError);
    expect(s.state).toBe('unregistered');
  });
});

describe('57 replay', () => {
  it('hands back the identical frame, up to replayAttemptsMax, then fails retriable', () => {
    const s = session({ replayAttemptsMax: 2 });
    login(s);
    s.submit(call(CommandCode.CreateStream));
    const [create] = drain(s);
    if (create === undefined) throw new Error('no create');
    const transient = (): SessionEvent[] => s.receive(reply(create, encodeResultRejection(57)));
    const [first] = transient();
    expect(first).toMatchObject({ kind: 'transient', attempt: 1 });
    const ticket = (first as { ticket: number }).ticket;
    expect(s.replay(ticket)?.frame).toBe(create.frame);
    expect(s.replay(ticket)).toBeNull();
    expect(transient()[0]).toMatchObject({ kind: 'transient', attempt: 2 });
    s.replay(ticket);
    const [failed] = transient();
    expect(failed).toMatchObject({ kind: 'failed', error: { code: 57, retriable: true } });
  });

  it('a call waiting for its replay matches no reply', () => {
    const s = session();
    login(s);
    s.submit(call(CommandCode.Ping));
    s.submit(call(CommandCode.Ping));
    const [a, b] = drain(s);
    s.receive(reply(a as Sent, EMPTY, 57));
    const events = s.receive(reply(b as Sent));
    expect(events[0]).toMatchObject({ kind: 'reply' });
    expect(s.inFlightCount).toBe(1);
  });
});

describe('evictions, abandon, close', () => {
  it('an eviction fails every in-flight and queued call and kills the session', () => {
    const s = session({ windowMax: 1 });
    login(s);
    s.submit(call(CommandCode.Ping));
    s.submit(call(CommandCode.Ping));
    const [ping] = drain(s);
    if (ping === undefined) throw new Error('no ping');
    const events = s.receive(encodeEvictionHeader({ client: ping.client, reason: EvictionReason.SessionTooLow }));
    expect(events.map((e) => e.kind)).toEqual(['evicted', 'failed', 'failed']);
    const error = (events[1] as { error: ShoalEvictionError }).error;
    expect(error).toBeInstanceOf(ShoalEvictionError);
    expect(error).toMatchObject({ code: 40, reason: EvictionReason.SessionTooLow, retriable: true });
    expect(s.state).toBe('evicted');
    s.submit(call(CommandCode.Ping));
    expect(s.drain().events[0]).toMatchObject({ kind: 'failed', error });
    login(s, 21n);
    expect(s.state).toBe('bound');
    expect(s.clientId).not.toBe(ping.client);
  });

  it('an IncompatibleProtocol eviction decodes as an eviction whatever its window, an inverted one included (as the official SDK)', () => {
    const windowed = (max: number, min: number): Uint8Array => {
      const s0 = session();
      login(s0);
      const frame = encodeEvictionHeader({ client: s0.clientId, reason: EvictionReason.InvalidCredentials }).slice();
      const view = new DataView(frame.buffer);
      view.setUint32(144, max, true);
      view.setUint32(148, min, true);
      frame[255] = EvictionReason.IncompatibleProtocol;
      const events = s0.receive(frame);
      expect(events[0]?.kind).toBe('evicted');
      expect(s0.state).toBe('evicted');
      return frame;
    };
    for (const [max, min, code] of [[0x2c00, 0x2c00, 14003], [0x2b00, 0x2c00, 40], [0x2c00, 0, 40]] as const) {
      const s1 = session();
      login(s1);
      const frame = windowed(max, min);
      new DataView(frame.buffer).setBigUint64(128, s1.clientId & 0xffff_ffff_ffff_ffffn, true);
      new DataView(frame.buffer).setBigUint64(136, s1.clientId >> 64n, true);
      const events = s1.receive(frame);
      expect(events[0]).toMatchObject({ kind: 'evicted', error: { code, reason: EvictionReason.IncompatibleProtocol } });
    }
  });

  it('an eviction for another client id is ignored', () => {
    const s = session();
    login(s);
    expect(s.receive(encodeEvictionHeader({ client: s.clientId + 1n, reason: 1 }))).toEqual([{ kind: 'dropped', reason: 'foreign_client' }]);
    expect(s.state).toBe('bound');
  });

  it('abandon: a queued call leaves unsent; an in-flight one becomes a ghost whose reply is dropped', () => {
    const s = session({ windowMax: 1 });
    login(s);
    const a = s.submit(call(CommandCode.Ping));
    const b = s.submit(call(CommandCode.Ping));
    const [sentA] = drain(s);
    expect(s.abandon(b)).toBe(false);
    expect(s.abandon(a)).toBe(true);
    expect(s.inFlightCount).toBe(0);
    expect(s.receive(reply(sentA as Sent))).toEqual([{ kind: 'dropped', reason: 'abandoned' }]);
  });

  it('close fails everything, telling written from unwritten, and the session stays dead', () => {
    const s = session({ windowMax: 1 });
    login(s);
    s.submit(call(CommandCode.Ping));
    s.submit(call(CommandCode.Ping));
    drain(s);
    const events = s.close((written) => new ShoalConnectionLostError('x:1', written));
    expect(events.map((e) => (e.kind === 'failed' ? (e.error as ShoalConnectionLostError).written : null))).toEqual([true, false]);
    s.submit(call(CommandCode.Ping));
    expect((s.drain().events[0] as { error: unknown }).error).toBeInstanceOf(ShoalClosedError);
  });
});
