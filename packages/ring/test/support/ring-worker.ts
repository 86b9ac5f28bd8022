/**
 * The worker side of the threaded ring tests. One task per worker, given as workerData (a typed
 * union: the thread boundary is typed), one final report posted back.
 *
 * A pending Atomics.waitAsync does not keep a worker alive (docs/ring.md), so every task keeps
 * a `parentPort` listener registered until it reports.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { RingConsumer, RingProducer } from '@shoal/ring';
import { Prng } from '@shoal/stdx';
import { checkFrame, drawLength, fillFrame } from './frames.js';
import { type HandleMessage, type WorkerReport, type WorkerTask, isHandleMessage } from './tasks.js';

const port = parentPort;
if (port === null) throw new Error('ring-worker: not in a worker');
const inbox: unknown[] = [];
const waiters: ((message: unknown) => void)[] = [];
// Keeps the worker alive while it is parked on a ring (see header comment).
port.on('message', (message: unknown) => {
  const waiter = waiters.shift();
  if (waiter !== undefined) waiter(message);
  else inbox.push(message);
});

function nextMessage(): Promise<unknown> {
  if (inbox.length > 0) return Promise.resolve(inbox.shift());
  return new Promise((resolve) => waiters.push(resolve));
}

let spinSink = 0;
/** Busy-waits a random number of iterations: shifts the two threads' timing against each other. */
function spin(prng: Prng, spinMax: number): void {
  if (spinMax === 0) return;
  const n = prng.below(spinMax + 1);
  for (let i = 0; i < n; i++) spinSink = (spinSink + i) | 0;
}

async function produce(task: Extract<WorkerTask, { kind: 'produce' }>): Promise<WorkerReport> {
  const producer = RingProducer.attach(task.ring);
  const lengths = new Prng(task.seed);
  const jitter = new Prng(task.seed ^ 0x5a5a5a5a);
  const scratch = new Uint8Array(task.sizeMax);
  let slowWrites = 0;
  let batchLeft = 1 + jitter.below(task.batchMax);
  for (let seq = 0; seq < task.frameCount; seq++) {
    const length = drawLength(lengths, { sizeMax: task.sizeMax });
    if (task.api === 'reserve') {
      for (;;) {
        const view = producer.reserve(length);
        if (typeof view !== 'string') {
          fillFrame(view, length, seq);
          producer.commit(length);
          break;
        }
        if (view !== 'full') return { kind: 'report', ok: false, error: `reserve: ${view}` };
        slowWrites += 1;
        await producer.waitForSpace(length);
      }
    } else {
      fillFrame(scratch, length, seq);
      const frame = scratch.subarray(0, length);
      const split = jitter.below(length + 1);
      const head = frame.subarray(0, split);
      const body = frame.subarray(split);
      const attempt = task.api === 'parts' ? producer.tryWriteParts([head, body.subarray(0, 3), body.subarray(3)]) : producer.tryWrite(head, body);
      if (attempt === 'full') {
        slowWrites += 1;
        const outcome = task.api === 'parts'
          ? await producer.writeParts([head, body.subarray(0, 3), body.subarray(3)])
          : await producer.write(head, body);
        if (outcome !== 'ok') return { kind: 'report', ok: false, error: `write: ${outcome}` };
      } else if (attempt !== 'ok') {
        return { kind: 'report', ok: false, error: `tryWrite: ${attempt}` };
      }
    }
    batchLeft -= 1;
    if (batchLeft === 0) {
      spin(jitter, task.spinMax);
      producer.flush();
      batchLeft = 1 + jitter.below(task.batchMax);
    }
  }
  producer.close();
  return { kind: 'report', ok: true, frames: task.frameCount, slowWrites, parks: 0 };
}

async function consume(task: Extract<WorkerTask, { kind: 'consume' }>): Promise<WorkerReport> {
  const consumer = RingConsumer.attach(task.ring);
  const lengths = new Prng(task.seed);
  const jitter = new Prng(task.seed ^ 0x3c3c3c3c);
  let seq = 0;
  let error: string | null = null;
  let parks = 0;
  const visit = (frame: Uint8Array): void => {
    if (seq >= task.frameCount) error ??= `more than ${task.frameCount} frames`;
    error ??= checkFrame(frame, drawLength(lengths, { sizeMax: task.sizeMax }), seq);
    seq += 1;
  };
  for (;;) {
    consumer.read(visit, 1 + jitter.below(64));
    if (consumer.ended) break;
    spin(jitter, task.spinMax);
    if (!consumer.hasWork()) parks += 1;
    await consumer.wait();
  }
  if (error === null && seq !== task.frameCount) error = `got ${seq} frames, expected ${task.frameCount}`;
  if (error !== null) return { kind: 'report', ok: false, error };
  return { kind: 'report', ok: true, frames: seq, slowWrites: 0, parks };
}

async function echo(task: Extract<WorkerTask, { kind: 'echo' }>): Promise<WorkerReport> {
  const consumer = RingConsumer.attach(task.inbound);
  const producer = RingProducer.attach(task.outbound);
  const jitter = new Prng(task.seed);
  let frames = 0;
  let parks = 0;
  let error: string | null = null;
  const visit = (frame: Uint8Array): void => {
    // The test sizes outbound so an echo always fits: a 'full' here is a bug worth reporting.
    const status = producer.tryWrite(frame);
    if (status !== 'ok') error ??= `echo write: ${status}`;
    frames += 1;
  };
  for (;;) {
    if (consumer.read(visit) > 0) {
      spin(jitter, task.spinMax);
      producer.flush();
    }
    if (error !== null) return { kind: 'report', ok: false, error };
    if (consumer.ended) break;
    spin(jitter, task.spinMax);
    if (!consumer.hasWork()) parks += 1;
    await consumer.wait();
  }
  producer.close();
  return { kind: 'report', ok: true, frames, slowWrites: 0, parks };
}

async function produceUntilClosed(task: Extract<WorkerTask, { kind: 'produce-until-closed' }>): Promise<WorkerReport> {
  const producer = RingProducer.attach(task.ring);
  const frame = new Uint8Array(task.frameLength);
  let frames = 0;
  let slowWrites = 0;
  for (;;) {
    if (producer.tryWrite(frame) === 'ok') {
      frames += 1;
      continue;
    }
    slowWrites += 1;
    const outcome = await producer.write(frame);
    if (outcome === 'closed') break;
    if (outcome !== 'ok') return { kind: 'report', ok: false, error: `write: ${outcome}` };
    frames += 1;
  }
  // Once closed, every later write that needs space, and every flush, says so at once.
  const after = producer.tryWrite(frame);
  if (after !== 'closed') return { kind: 'report', ok: false, error: `tryWrite after close: ${after}` };
  if (producer.flush() !== 'closed') return { kind: 'report', ok: false, error: 'flush after close' };
  if ((await producer.write(frame)) !== 'closed') return { kind: 'report', ok: false, error: 'write after close' };
  return { kind: 'report', ok: true, frames, slowWrites, parks: 0 };
}

async function closeOnMessage(task: Extract<WorkerTask, { kind: 'close-on-message' }>): Promise<WorkerReport> {
  const producer = RingProducer.attach(task.ring);
  port?.postMessage('attached');
  await nextMessage();
  producer.close();
  return { kind: 'report', ok: true, frames: 0, slowWrites: 0, parks: 0 };
}

async function relayHandle(task: Extract<WorkerTask, { kind: 'relay-handle' }>): Promise<WorkerReport> {
  const message = await nextMessage();
  if (!isHandleMessage(message)) return { kind: 'report', ok: false, error: 'expected a handle message' };
  port?.postMessage({ kind: 'handle', ring: message.ring } satisfies HandleMessage);
  const producer = RingProducer.attach(message.ring);
  const frame = new Uint8Array(64);
  for (let seq = 0; seq < task.frameCount; seq++) {
    fillFrame(frame, frame.length, seq);
    const outcome = await producer.write(frame);
    if (outcome !== 'ok') return { kind: 'report', ok: false, error: `write: ${outcome}` };
  }
  producer.close();
  return { kind: 'report', ok: true, frames: task.frameCount, slowWrites: 0, parks: 0 };
}

async function run(task: WorkerTask): Promise<WorkerReport> {
  switch (task.kind) {
    case 'produce': return produce(task);
    case 'consume': return consume(task);
    case 'echo': return echo(task);
    case 'produce-until-closed': return produceUntilClosed(task);
    case 'close-on-message': return closeOnMessage(task);
    case 'relay-handle': return relayHandle(task);
  }
}

run(workerData as WorkerTask).then(
  (report) => port.postMessage(report),
  (error: unknown) => port.postMessage({ kind: 'report', ok: false, error: String((error as Error)?.stack ?? error) } satisfies WorkerReport),
);
