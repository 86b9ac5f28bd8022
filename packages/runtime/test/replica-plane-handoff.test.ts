/**
 * fd hand-off (node-runtime-notes.md): the acceptor finishes the handshake, hands the plaintext
 * socket's fd plus the bytes already read to a real worker thread, which adopts it and serves the
 * connection; the first pipelined frames arrive intact on the worker, writes from the worker
 * reach the peer, and the parked handle on the acceptor is never closed.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { MacDirection, deriveMacKey, encodeReplicaFinish, encodeReplicaHello, handshakeMac } from '@shoal/protocol';
import { detachForHandOff, parkedHandOffCount } from '../src/replica-plane/index.js';
import type { HandOffCommand, HandOffEvent } from './replica-plane-handoff-worker.js';
import {
  CLUSTER,
  RawPeer,
  SECRET,
  commitFrame,
  commitOf,
  concatBytes,
  freePorts,
  nonce,
  settingsFor,
  startNode,
  stopAll,
  waitFor,
} from './replica-plane-support.js';

// Workers cannot inherit tsx's hooks on Node 20: register them inside the worker (see
// packages/ring/test/support/worker-harness.ts), then import the TypeScript module.
const require = createRequire(import.meta.url);
const tsxApi = pathToFileURL(require.resolve('tsx/esm/api').replace(/index\.cjs$/, 'index.mjs')).href;
const workerModule = new URL('./replica-plane-handoff-worker.ts', import.meta.url).href;
const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerModule)}); });`;

const workers: Worker[] = [];
afterEach(async () => {
  await stopAll();
  await Promise.all(workers.splice(0).map((worker) => worker.terminate()));
});

function spawnWorker(): { worker: Worker; events: HandOffEvent[]; post: (command: HandOffCommand, transfer?: ArrayBuffer[]) => void } {
  const worker = new Worker(bootstrap, { eval: true, execArgv: ['--conditions=source'] });
  workers.push(worker);
  const events: HandOffEvent[] = [];
  worker.on('message', (event: HandOffEvent) => events.push(event));
  worker.on('error', (error) => events.push({ kind: 'closed', peer: -1, reason: `worker error: ${String(error)}` }));
  return { worker, events, post: (command, transfer = []) => worker.postMessage(command, transfer) };
}

function commitsSeen(events: readonly HandOffEvent[]): bigint[] {
  return events.flatMap((event) => (event.kind === 'frames' ? [...event.commits] : []));
}

/** A raw replica 0 that completes the handshake and pipelines three frames behind it. */
async function dialAndPipeline(port: number, auth: boolean): Promise<RawPeer> {
  const raw = await RawPeer.connect(port);
  const frames = concatBytes(commitFrame(0, 1n), commitFrame(0, 2n), commitFrame(0, 3n));
  if (!auth) {
    raw.write(concatBytes(encodeReplicaHello({ cluster: CLUSTER, replica: 0 }), frames));
    return raw;
  }
  const nonceD = nonce();
  raw.write(encodeReplicaHello({ cluster: CLUSTER, replica: 0, nonce: nonceD }));
  const challenge = await raw.bytes(256);
  const mac = handshakeMac(deriveMacKey(SECRET), { cluster: CLUSTER, dialerId: 0, acceptorId: 1, nonceD, nonceA: challenge.slice(128, 160), tlsExporter: null, direction: MacDirection.Dialer });
  raw.write(concatBytes(encodeReplicaFinish({ cluster: CLUSTER, replica: 0, mac }), frames));
  return raw;
}

describe('fd hand-off to a worker thread', () => {
  for (const auth of [false, true]) {
    it(`leftover bytes travel with the fd; the worker serves the link (auth ${auth ? 'on' : 'off'})`, async () => {
      const { events, post } = spawnWorker();
      const ports = await freePorts(2);
      const parkedBefore = parkedHandOffCount();
      const one = await startNode(settingsFor({ selfId: 1, ports, auth: auth ? { secret: SECRET } : null }), {
        dial: false,
        handOff: (peer, pkg) => post({ kind: 'adopt', peer, replicaCount: 2, pkg }, [pkg.leftover.buffer as ArrayBuffer]),
      });
      const raw = await dialAndPipeline(ports[1] as number, auth);
      await waitFor(() => commitsSeen(events).length === 3, 5000, 'three frames on the worker');
      expect(commitsSeen(events)).toEqual([1n, 2n, 3n]);
      const adopted = events.find((event) => event.kind === 'adopted');
      // The pipelined frames were read by the acceptor before the hand-off (same segment as the
      // handshake) and crossed as leftover; nothing reached the worker through a second reader.
      expect(adopted).toMatchObject({ kind: 'adopted', peer: 0 });
      expect(adopted?.kind === 'adopted' ? adopted.leftoverBytes : 0).toBeGreaterThan(0);
      expect(one.ups[0]?.info).toEqual({ direction: 'inbound', tls: false, handedOff: true });
      expect(one.plane.send(0, commitFrame(1, 1n))).toBe('handed_off');
      expect(parkedHandOffCount()).toBe(parkedBefore + 1);

      // The worker writes on the adopted fd; the peer sees it.
      post({ kind: 'send', commit: 42n });
      const reply = await raw.bytes(auth ? 512 : 256);
      expect(commitOf(reply.subarray(reply.length - 256))).toBe(42n);
      // More frames go straight to the worker's socket.
      raw.write(commitFrame(0, 4n));
      await waitFor(() => commitsSeen(events).length === 4, 3000, 'fourth frame');

      // The worker closes the connection; the acceptor frees the pair slot and takes a new link.
      post({ kind: 'close' });
      await raw.waitClosed();
      await waitFor(() => events.some((event) => event.kind === 'closed'), 3000, 'worker close');
      one.plane.releaseHandedOff(0);
      expect(one.plane.isConnected(0)).toBe(false);
      expect(one.downs).toEqual([{ peer: 0, reason: 'released' }]);
      const again = await dialAndPipeline(ports[1] as number, auth);
      await waitFor(() => one.plane.isConnected(0) && events.filter((event) => event.kind === 'adopted').length === 2, 3000, 'second hand-off');
      await waitFor(() => commitsSeen(events).length === 7, 3000, 'frames on the second link');
      expect(commitsSeen(events).slice(4)).toEqual([1n, 2n, 3n]);
      again.destroy();
    });
  }

  it('a TLS socket is never handed off', async () => {
    const { TLSSocket } = await import('node:tls');
    const { Socket } = await import('node:net');
    const socket = new TLSSocket(new Socket());
    expect(() => detachForHandOff(socket, new Uint8Array(0))).toThrow(/TLS/);
    socket.destroy();
  });
});
