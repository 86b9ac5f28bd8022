/**
 * The in-test TCP proxy (test/support/tcp-proxy.ts) itself, against an echo server: forward,
 * delay, partition (hold and drop, one way and both), corrupt, drop chunks, cut, refuse.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../../test/support/tcp-proxy.js';
import { RawPeer, sleep, waitFor } from './replica-plane-support.js';

let echo: Server;
let echoPort = 0;
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((done) => echo.listen({ host: '127.0.0.1', port: 0 }, () => done()));
  echoPort = (echo.address() as AddressInfo).port;
});
afterAll(() => {
  echo.close();
});
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.stop()));
});

async function proxy(): Promise<TcpProxy> {
  const started = await TcpProxy.start({ host: '127.0.0.1', port: echoPort });
  proxies.push(started);
  return started;
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

describe('TcpProxy', () => {
  it('forwards both ways and counts bytes', async () => {
    const p = await proxy();
    const client = await RawPeer.connect(p.port);
    client.write(bytes('hello'));
    expect(text(await client.bytes(5))).toBe('hello');
    expect(p.stats.bytes).toEqual({ upstream: 5, downstream: 5 });
    expect(p.connections).toBe(1);
    client.destroy();
    await waitFor(() => p.connections === 0, 2000, 'pair torn down');
  });

  it('delays chunks and keeps their order', async () => {
    const p = await proxy();
    p.setDelay(120, 'upstream');
    const client = await RawPeer.connect(p.port);
    const started = Date.now();
    client.write(bytes('a'));
    await sleep(10);
    p.setDelay(0, 'upstream');
    client.write(bytes('b'));
    expect(text(await client.bytes(2))).toBe('ab');
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('hold partition: one way stalls, the other flows; heal delivers in order', async () => {
    const p = await proxy();
    const client = await RawPeer.connect(p.port);
    p.partition('downstream', 'hold');
    client.write(bytes('123'));
    await sleep(80);
    expect(client.received.length).toBe(0);
    expect(p.stats.bytes.upstream).toBe(3);
    p.heal();
    expect(text(await client.bytes(3))).toBe('123');
  });

  it('drop partition discards bytes in both directions; new connections black-hole', async () => {
    const p = await proxy();
    const client = await RawPeer.connect(p.port);
    p.partition('both', 'drop');
    client.write(bytes('lost'));
    await sleep(60);
    expect(client.received.length).toBe(0);
    expect(p.stats.dropped.upstream).toBe(4);
    const late = await RawPeer.connect(p.port);
    late.write(bytes('x'));
    await sleep(40);
    expect(late.received.length).toBe(0);
    p.heal();
    client.write(bytes('ok'));
    expect(text(await client.bytes(2))).toBe('ok');
  });

  it('corrupts exactly one bit of the next chunk, and seeded random corruption is reproducible', async () => {
    const p = await proxy();
    const client = await RawPeer.connect(p.port);
    p.corruptNext('upstream');
    const sent = new Uint8Array(64).fill(0xaa);
    client.write(sent);
    const got = await client.bytes(64);
    const flipped = got.reduce((bits, byte, i) => bits + popcount(byte ^ (sent[i] as number)), 0);
    expect(flipped).toBe(1);
    expect(p.stats.corrupted.upstream).toBe(1);

    const runs: string[] = [];
    for (let run = 0; run < 2; run++) {
      const q = await proxy();
      q.corrupt({ directions: 'upstream', probability: 1, seed: 99 });
      const c = await RawPeer.connect(q.port);
      c.write(new Uint8Array(32));
      runs.push(Buffer.from(await c.bytes(32)).toString('hex'));
    }
    expect(runs[0]).toBe(runs[1]);
    expect(runs[0]).not.toBe('00'.repeat(32));
  });

  it('drops whole chunks with a probability', async () => {
    const p = await proxy();
    p.setDropProbability(1, 'upstream');
    const client = await RawPeer.connect(p.port);
    client.write(bytes('gone'));
    await sleep(50);
    expect(client.received.length).toBe(0);
    p.setDropProbability(0);
    client.write(bytes('kept'));
    expect(text(await client.bytes(4))).toBe('kept');
  });

  it('cut closes every connection (FIN or RST); refuse closes new ones at once', async () => {
    const p = await proxy();
    const a = await RawPeer.connect(p.port);
    const b = await RawPeer.connect(p.port);
    await waitFor(() => p.connections === 2, 2000, 'two pairs');
    p.cut();
    await a.waitClosed();
    await b.waitClosed();
    const c = await RawPeer.connect(p.port);
    await waitFor(() => p.connections === 1, 2000, 'new pair');
    p.cut({ reset: true });
    await c.waitClosed();
    p.refuse(true);
    const refused = await RawPeer.connect(p.port);
    await refused.waitClosed();
    expect(p.stats.refused).toBe(1);
    p.reset();
    const again = await RawPeer.connect(p.port);
    again.write(bytes('z'));
    expect(text(await again.bytes(1))).toBe('z');
    again.destroy();
  });
});

function popcount(value: number): number {
  let count = 0;
  for (let v = value; v !== 0; v &= v - 1) count++;
  return count;
}
