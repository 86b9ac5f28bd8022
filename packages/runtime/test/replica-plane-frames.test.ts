/**
 * After the handshake: the validation order of replication-semantics.md §1.2 on a live
 * connection (stream errors close, bad frames are dropped with a reason, valid frames keep
 * flowing), the replica_frames.json vectors fed to a live listener, and the bounded send queue.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Command, encodeReplicaHello, validateHeader } from '@shoal/protocol';
import {
  CLUSTER,
  RawPeer,
  commitFrame,
  commitOf,
  concatBytes,
  freePorts,
  fromHex,
  loadVectors,
  prepareFrame,
  settingsFor,
  sleep,
  startNode,
  stopAll,
  waitFor,
  type TestNode,
} from './replica-plane-support.js';
import { LINK_HAND_OFF_BYTES } from '../src/replica-plane/index.js';

afterEach(stopAll);

/** Node `selfId` of `count` (auth off) and a raw dialer that completed the handshake as replica `as`. */
async function linkedRaw(selfId = 1, count = 2, as = 0, bus: Parameters<typeof settingsFor>[0]['bus'] = {}): Promise<{ node: TestNode; raw: RawPeer }> {
  const ports = await freePorts(count);
  const node = await startNode(settingsFor({ selfId, ports, bus }), { dial: false });
  const raw = await RawPeer.connect(ports[selfId] as number);
  raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: as }));
  await waitFor(() => node.plane.isConnected(as), 3000, 'install');
  return { node, raw };
}

describe('inbound validation on a live connection', () => {
  it('a bad seal is dropped with a reason while valid frames keep flowing; size > 64 MiB closes the connection', async () => {
    const { node, raw } = await linkedRaw();
    const badSeal = commitFrame(0, 2n);
    badSeal[3] = (badSeal[3] as number) ^ 0x10;
    const handshakeAgain = encodeReplicaHello({ cluster: CLUSTER, replica: 0 });
    raw.write(concatBytes(commitFrame(0, 1n), badSeal, commitFrame(0, 3n), handshakeAgain, commitFrame(0, 4n)));
    await waitFor(() => (node.frames.get(0)?.length ?? 0) === 3, 3000, 'three valid frames');
    expect(node.frames.get(0)?.map(commitOf)).toEqual([1n, 3n, 4n]);
    expect(node.drops).toEqual([
      { peer: 0, reason: 'frame_seal_mismatch' },
      { peer: 0, reason: 'handshake_command' },
    ]);
    expect(node.plane.stats().peers[0]?.connection?.dropReasons).toEqual({ frame_seal_mismatch: 1, handshake_command: 1 });
    expect(node.log.lines.some((line) => line.level === 'warn' && line.msg === 'replica frame dropped' && line.fields['reason'] === 'frame_seal_mismatch')).toBe(true);

    // A header declaring 64 MiB + 1 is a stream error: frames before it are delivered, then close.
    const huge = commitFrame(0, 6n);
    new DataView(huge.buffer).setUint32(48, 64 * 1024 * 1024 + 1, true);
    raw.write(concatBytes(commitFrame(0, 5n), huge));
    await raw.waitClosed();
    await waitFor(() => node.downs.length === 1, 3000, 'peer down');
    expect(node.downs[0]).toEqual({ peer: 0, reason: 'frame_size_above_max' });
    expect(node.frames.get(0)?.map(commitOf)).toEqual([1n, 3n, 4n, 5n]);
    expect(node.plane.isConnected(0)).toBe(false);
  });

  it('frames are handed on validated; a large prepare that straddles reads comes in a buffer of its own', async () => {
    const { node, raw } = await linkedRaw();
    const big = prepareFrame(0, 1, 3 * LINK_HAND_OFF_BYTES);
    const small = prepareFrame(0, 2, 1000);
    const justBelow = prepareFrame(0, 3, LINK_HAND_OFF_BYTES - 257);
    // Above 64 KiB, so no socket read (at most 64 KiB) can hold it whole: it always straddles.
    const justAbove = prepareFrame(0, 4, LINK_HAND_OFF_BYTES);
    const sent = [commitFrame(0, 1n), big, small, justBelow, justAbove, commitFrame(0, 2n)];
    expect(sent.map((f) => validateHeader(f))).toEqual(sent.map(() => null));
    // Written in 1,000-byte pieces; however the kernel coalesces them, the two frames above 64 KiB
    // straddle reads, and frames below the hand-off size are never handed over.
    const stream = concatBytes(...sent);
    for (let at = 0; at < stream.length; at += 1000) raw.write(stream.subarray(at, at + 1000));
    await waitFor(() => node.handed.length === sent.length, 5000, 'every frame');
    const hex = (f: Uint8Array): string => Buffer.from(f.buffer, f.byteOffset, f.length).toString('hex');
    expect(node.frames.get(0)?.map(hex)).toEqual(sent.map(hex));
    expect(node.handed.map((h) => h.size)).toEqual(sent.map((f) => f.length));
    expect(node.handed.every((h) => h.validated)).toBe(true);
    expect(node.handed.map((h) => h.owned)).toEqual([false, true, false, false, true, false]);
    expect(node.handed.filter((h) => h.owned).every((h) => h.exact)).toBe(true);
  });

  it('a command above 29 and a size below 256 are stream errors', async () => {
    for (const [mutate, reason] of [
      [(f: Uint8Array) => { f[60] = 30; }, 'frame_command_invalid'],
      [(f: Uint8Array) => { new DataView(f.buffer).setUint32(48, 255, true); }, 'frame_size_below_header'],
    ] as const) {
      const { node, raw } = await linkedRaw();
      const frame = commitFrame(0, 9n);
      mutate(frame);
      raw.write(frame);
      await raw.waitClosed();
      await waitFor(() => node.downs.length === 1, 3000, 'peer down');
      expect(node.downs[0]?.reason).toBe(reason);
      await node.plane.stop();
    }
  });

  it('frames claiming a replica outside the roster are dropped (replica_out_of_range)', async () => {
    const { node, raw } = await linkedRaw();
    raw.write(concatBytes(commitFrame(5, 1n), commitFrame(1, 2n)));
    await waitFor(() => (node.frames.get(0)?.length ?? 0) === 1, 3000, 'one frame');
    expect(node.drops).toEqual([{ peer: 0, reason: 'replica_out_of_range' }]);
  });
});

interface VectorFrame {
  readonly name: string;
  readonly command: number;
  readonly hex: string;
}
interface VectorDoc {
  readonly frames: readonly VectorFrame[];
  readonly negative: readonly { readonly name: string; readonly hex: string; readonly expect: string }[];
}

describe('replica_frames.json against a live listener', () => {
  it('every frame is accepted or refused exactly as the vectors say', async () => {
    const doc = loadVectors('replica_frames.json') as VectorDoc;
    // The vectors describe a 3-replica cluster named iggy-cluster; replica 2 accepts replica 0.
    const { node, raw } = await linkedRaw(2, 3, 0);
    const streamError = doc.negative.filter((entry) => entry.name === 'command_30');
    const negatives = doc.negative.filter((entry) => entry.name !== 'command_30');
    expect(streamError).toHaveLength(1);

    const clientBound = new Set<number>([Command.Reply, Command.Eviction]);
    const handshake = new Set<number>([Command.ReplicaHello, Command.ReplicaChallenge, Command.ReplicaFinish]);
    const expectedAccepted = doc.frames.filter((f) => !clientBound.has(f.command) && !handshake.has(f.command));
    const expectedDrops = [
      ...doc.frames.filter((f) => clientBound.has(f.command)).map((f) => ({ name: f.name, reason: 'client_bound_command' })),
      ...doc.frames.filter((f) => handshake.has(f.command)).map((f) => ({ name: f.name, reason: 'handshake_command' })),
    ];
    expect(expectedAccepted.length).toBeGreaterThanOrEqual(27);
    expect(expectedDrops.map((d) => d.name).sort()).toEqual(
      ['eviction_on_replica_plane', 'replica_challenge', 'replica_challenge_reject', 'replica_finish', 'replica_hello', 'replica_hello_legacy', 'reply_on_replica_plane'].sort(),
    );

    // One stream: all frames in vector order, then every negative, with odd chunk boundaries.
    const ordered = [...doc.frames.map((f) => ({ name: f.name, bytes: fromHex(f.hex) })), ...negatives.map((n) => ({ name: n.name, bytes: fromHex(n.hex) }))];
    const stream = concatBytes(...ordered.map((entry) => entry.bytes));
    for (let at = 0; at < stream.length; at += 1000) raw.write(stream.subarray(at, at + 1000));

    await waitFor(() => (node.frames.get(0)?.length ?? 0) + node.drops.length === ordered.length, 5000, 'every frame judged');
    const accepted = node.frames.get(0) ?? [];
    expect(accepted.map((frame) => Buffer.from(frame).toString('hex'))).toEqual(expectedAccepted.map((f) => f.hex));

    // Drops in stream order: the refused vector frames, then each negative with the reason the
    // protocol's validateHeader gives for its bytes (never null).
    const expectedReasons = [
      ...doc.frames.filter((f) => clientBound.has(f.command) || handshake.has(f.command)).map((f) => (clientBound.has(f.command) ? 'client_bound_command' : 'handshake_command')),
      ...negatives.map((n) => validateHeader(fromHex(n.hex), 0, { replicaCount: 3 })),
    ];
    expect(expectedReasons.every((reason) => typeof reason === 'string')).toBe(true);
    expect(node.drops.map((d) => d.reason)).toEqual(expectedReasons);
    // Reply and Eviction from `frames`, plus the negative `reply_is_client_only`.
    expect(node.drops.filter((d) => d.reason === 'client_bound_command')).toHaveLength(3);
    expect(node.plane.isConnected(0)).toBe(true);

    // command_30 is not a dropped frame but a stream error: the connection closes.
    raw.write(fromHex((streamError[0] as { hex: string }).hex));
    await raw.waitClosed();
    await waitFor(() => node.downs.length === 1, 3000, 'peer down');
    expect(node.downs[0]?.reason).toBe('frame_command_invalid');
  });
});

describe('outbound queue and writer', () => {
  it('overflow of peer_queue_capacity is dropped and counted', async () => {
    const { node, raw } = await linkedRaw(1, 2, 0, { peerQueueCapacity: 4 });
    const outcomes = Array.from({ length: 10 }, (_, i) => node.plane.send(0, commitFrame(1, BigInt(i + 1))));
    expect(outcomes).toEqual([...Array<string>(4).fill('queued'), ...Array<string>(6).fill('queue_full')]);
    expect(node.plane.stats().peers[0]?.connection?.queueDropped).toBe(6);
    const got = await raw.bytes(4 * 256);
    expect([0, 1, 2, 3].map((i) => commitOf(got.subarray(i * 256, (i + 1) * 256)))).toEqual([1n, 2n, 3n, 4n]);
    await sleep(50);
    expect(raw.received.length).toBe(4 * 256);
    // The queue drained: sending works again.
    expect(node.plane.send(0, commitFrame(1, 99n))).toBe('queued');
    expect(node.plane.send(7, commitFrame(1, 1n))).toBe('not_connected');
  });

  it('a peer that stops reading fills the queue; the writer never buffers without bound', async () => {
    const { node, raw } = await linkedRaw(1, 2, 0, { peerQueueCapacity: 8, maxBatch: 4 });
    raw.socket.pause();
    const big = new Uint8Array(1024 * 1024);
    big.set(commitFrame(1, 1n).subarray(0, 256));
    let queued = 0;
    let full = 0;
    for (let round = 0; round < 200 && full === 0; round++) {
      const outcome = node.plane.send(0, big);
      if (outcome === 'queued') queued++;
      else if (outcome === 'queue_full') full++;
      await sleep(2);
    }
    expect(full).toBeGreaterThan(0);
    const stats = node.plane.stats().peers[0];
    expect(stats?.queued).toBe(8);
    // In flight = sent to the socket but not yet written: at most the batches issued before it blocked.
    expect((stats?.connection?.framesOut ?? 0)).toBeLessThan(queued);
    raw.destroy();
  });

  it('writes are coalesced: up to max_batch frames per write, in order', async () => {
    const { node, raw } = await linkedRaw(1, 2, 0, { peerQueueCapacity: 1024, maxBatch: 256 });
    for (let i = 1; i <= 300; i++) expect(node.plane.send(0, commitFrame(1, BigInt(i)))).toBe('queued');
    const got = await raw.bytes(300 * 256);
    const commits = Array.from({ length: 300 }, (_, i) => commitOf(got.subarray(i * 256, (i + 1) * 256)));
    expect(commits).toEqual(Array.from({ length: 300 }, (_, i) => BigInt(i + 1)));
    const stats = node.plane.stats().peers[0]?.connection;
    expect(stats?.framesOut).toBe(300);
    expect(stats?.writeBatches).toBe(2);
  });
});
