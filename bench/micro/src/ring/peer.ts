/**
 * A ring-suite peer worker: executes PeerCommands one at a time and posts one PeerReply each.
 * Runs as TypeScript through the bootstrap in spawn.ts.
 */

import { parentPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { RingConsumer, RingProducer, recordBytes } from '@shoal/ring';
import type { ConsumeMode, PeerCommand, PeerReply } from './commands.js';

const port = parentPort;
if (port === null) throw new Error('ring peer: not in a worker');

const producers: RingProducer[] = [];
const consumers: RingConsumer[] = [];
let channel: MessagePort | null = null;

function nowNs(): number {
  return Number(process.hrtime.bigint());
}

function reply(message: PeerReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function at<T>(items: readonly T[], index: number, what: string): T {
  const item = items[index];
  if (item === undefined) throw new Error(`ring peer: no ${what} ${index}`);
  return item;
}

async function ringSend(command: Extract<PeerCommand, { kind: 'ring-send' }>): Promise<PeerReply> {
  const producer = at(producers, command.ring, 'producer');
  const frame = new Uint8Array(command.frameBytes).fill(0x5a);
  let advanced = 0; // bytes the write cursor moved: records + padding
  let parks = 0;
  let sinceFlush = 0;
  const startNs = nowNs();
  for (let i = 0; i < command.frames; i++) {
    if (producer.tryWrite(frame) !== 'ok') {
      advanced += producer.unpublishedBytes; // write() flushes before it parks
      parks += 1;
      if ((await producer.write(frame)) !== 'ok') throw new Error('ring peer: write failed');
    }
    if (++sinceFlush === command.framesPerFlush) {
      advanced += producer.unpublishedBytes;
      producer.flush();
      sinceFlush = 0;
    }
  }
  advanced += producer.unpublishedBytes;
  producer.flush();
  const records = recordBytes(command.frameBytes) * command.frames;
  return { kind: 'sent', startNs, paddingBytes: advanced - records, recordBytes: records, parks };
}

let touched = 0;

async function ringReceive(command: Extract<PeerCommand, { kind: 'ring-receive' }>): Promise<PeerReply> {
  const consumer = at(consumers, command.ring, 'consumer');
  const mode: ConsumeMode = command.mode;
  const pool = new Uint8Array(consumer.frameSizeMax);
  const view = (frame: Uint8Array): void => {
    touched ^= (frame[0] as number) ^ (frame[frame.length - 1] as number);
  };
  const copy = (frame: Uint8Array): void => {
    pool.set(frame);
    touched ^= pool[0] as number;
  };
  const inPlace = (data: Uint8Array, offset: number, length: number): void => {
    touched ^= (data[offset] as number) ^ (data[offset + length - 1] as number);
  };
  reply({ kind: 'ready' });
  let received = 0;
  for (;;) {
    received += mode === 'in-place' ? consumer.readInPlace(inPlace) : consumer.read(mode === 'copy' ? copy : view);
    if (received >= command.frames) break;
    await consumer.wait();
  }
  return { kind: 'received', endNs: nowNs() };
}

function portOf(): MessagePort {
  if (channel === null) throw new Error('ring peer: no port attached');
  return channel;
}

async function portSend(command: Extract<PeerCommand, { kind: 'port-send' }>): Promise<PeerReply> {
  const messages = portOf();
  const frame = new Uint8Array(command.frameBytes).fill(0x5a);
  let acked = 0;
  let wake: (() => void) | null = null;
  const onAck = (count: number): void => {
    acked = count;
    wake?.();
  };
  messages.on('message', onAck);
  const startNs = nowNs();
  let sent = 0;
  // Until the final ack: an ack left in flight would land in the next round's listener.
  while (acked < command.frames) {
    while (sent < command.frames && sent - acked < command.window) {
      if (command.transfer) {
        // A transferred buffer is gone from the sender: each message needs a fresh one.
        const buffer = new ArrayBuffer(command.frameBytes);
        messages.postMessage(buffer, [buffer]);
      } else {
        messages.postMessage(frame); // structured clone: copied
      }
      sent += 1;
    }
    if (acked < command.frames) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
  }
  messages.off('message', onAck);
  return { kind: 'sent', startNs, paddingBytes: 0, recordBytes: 0, parks: 0 };
}

function portReceive(command: Extract<PeerCommand, { kind: 'port-receive' }>): Promise<PeerReply> {
  const messages = portOf();
  return new Promise((resolve) => {
    let received = 0;
    const onMessage = (message: Uint8Array | ArrayBuffer): void => {
      const bytes = message instanceof Uint8Array ? message : new Uint8Array(message);
      touched ^= (bytes[0] as number) ^ (bytes[bytes.length - 1] as number);
      received += 1;
      if (received % command.ackEvery === 0 || received === command.frames) messages.postMessage(received);
      if (received === command.frames) {
        messages.off('message', onMessage);
        resolve({ kind: 'received', endNs: nowNs() });
      }
    };
    messages.on('message', onMessage);
    reply({ kind: 'ready' });
  });
}

/**
 * Ring ping-pong. The pinger sends first; each side, on receiving, records now − stamp if it had
 * parked for that frame, then answers with a fresh stamp. Both sides park between frames, so
 * every sample is publish → parked thread running again.
 */
async function ringPing(command: Extract<PeerCommand, { kind: 'ring-ping' }>): Promise<PeerReply> {
  const producer = at(producers, command.out, 'producer');
  const consumer = at(consumers, command.in, 'consumer');
  const stamp = new Float64Array(1);
  const stampBytes = new Uint8Array(stamp.buffer);
  const samples = new Float64Array(command.rounds);
  let sampleCount = 0;
  let parked = false;
  let received = 0;
  const onFrame = (frame: Uint8Array): void => {
    const now = nowNs();
    stampBytes.set(frame);
    if (parked) samples[sampleCount++] = now - (stamp[0] as number);
    received += 1;
  };
  const send = (): void => {
    stamp[0] = nowNs();
    producer.tryWrite(stampBytes);
    producer.flush();
  };
  if (!command.serve) send();
  reply({ kind: 'ready' });
  while (received < command.rounds) {
    if (consumer.read(onFrame) > 0) {
      parked = false;
      if (command.serve || received < command.rounds) send();
      continue;
    }
    // Nothing there: we are about to park (unless the frame lands in between: not a sample).
    parked = !consumer.hasWork();
    await consumer.wait();
  }
  return { kind: 'latencies', samples: samples.slice(0, sampleCount), rounds: command.rounds };
}

function portPing(command: Extract<PeerCommand, { kind: 'port-ping' }>): Promise<PeerReply> {
  const messages = portOf();
  const samples = new Float64Array(command.rounds);
  return new Promise((resolve) => {
    let received = 0;
    const onMessage = (stamp: number): void => {
      samples[received] = nowNs() - stamp;
      received += 1;
      if (command.serve || received < command.rounds) messages.postMessage(nowNs());
      if (received === command.rounds) {
        messages.off('message', onMessage);
        resolve({ kind: 'latencies', samples, rounds: command.rounds });
      }
    };
    messages.on('message', onMessage);
    reply({ kind: 'ready' });
    if (!command.serve) messages.postMessage(nowNs());
  });
}

async function execute(command: PeerCommand): Promise<PeerReply> {
  switch (command.kind) {
    case 'attach-rings':
      for (const handle of command.produce) producers.push(RingProducer.attach(handle));
      for (const handle of command.consume) consumers.push(RingConsumer.attach(handle));
      return { kind: 'attached' };
    case 'attach-port':
      channel = command.port;
      return { kind: 'attached' };
    case 'ring-send': return ringSend(command);
    case 'ring-receive': return ringReceive(command);
    case 'port-send': return portSend(command);
    case 'port-receive': return portReceive(command);
    case 'ring-ping': return ringPing(command);
    case 'port-ping': return portPing(command);
  }
}

// The listener also keeps this worker alive while it is parked on a ring: a pending
// Atomics.waitAsync alone does not.
let queue: Promise<void> = Promise.resolve();
port.on('message', (command: PeerCommand) => {
  queue = queue.then(async () => {
    try {
      const result = await execute(command);
      reply(result, result.kind === 'latencies' ? [result.samples.buffer as ArrayBuffer] : []);
    } catch (error) {
      reply({ kind: 'failed', error: String((error as Error).stack ?? error) });
    }
  });
});
