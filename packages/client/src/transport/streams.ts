import { Readable, Writable } from 'node:stream';
import type { Message, ReceivedMessage } from '../messages.js';

/**
 * Node streams over the consumer and the producer (the only SDK module that touches node:stream,
 * so it lives with the transport):
 *
 *   await pipeline(consumer.readable(), new Transform({ objectMode: true, transform }), producer.writable());
 *
 * The Readable pulls from the consumer only when its buffer has room (`highWaterMark` messages,
 * default 16), so back-pressure reaches the polls; destroying it (or the pipeline failing) ends
 * the iteration (after-process commits what was handed on) and closes the consumer (leaving its
 * group). The Writable sends every message it is given through the producer (batched, pipelined)
 * and calls back once the server acknowledged it; `end()` flushes the producer, which stays open.
 */
export interface ReadableOptions {
  /** Messages buffered ahead of the reader (default 16). */
  readonly highWaterMark?: number;
}

export interface WritableOptions {
  /** Messages accepted before `write()` returns false (default 1000). */
  readonly highWaterMark?: number;
}

interface IterableSource extends AsyncIterable<ReceivedMessage> {
  close(): Promise<void>;
}

export function consumerReadable(source: IterableSource, options: ReadableOptions = {}): Readable {
  let iterator: AsyncIterator<ReceivedMessage> | null = null;
  return new Readable({
    objectMode: true,
    highWaterMark: options.highWaterMark ?? 16,
    read() {
      iterator ??= source[Symbol.asyncIterator]();
      iterator.next().then(
        (next) => {
          this.push(next.done === true ? null : next.value);
        },
        (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    },
    destroy(error, callback) {
      const ending = iterator?.return?.() ?? Promise.resolve(undefined);
      Promise.resolve(ending)
        .then(() => source.close())
        .then(() => callback(error), (closeError: unknown) => callback(error ?? (closeError instanceof Error ? closeError : new Error(String(closeError)))));
    },
  });
}

interface MessageSink {
  send(messages: Message | readonly Message[]): Promise<unknown>;
  flush(): Promise<void>;
}

/** A chunk may be a Message, or a string / bytes payload. */
export type WritableChunk = Message | string | Uint8Array;

function toMessage(chunk: WritableChunk): Message {
  return typeof chunk === 'string' || chunk instanceof Uint8Array ? { payload: chunk } : chunk;
}

export function producerWritable(sink: MessageSink, options: WritableOptions = {}): Writable {
  const settle = (sends: readonly Promise<unknown>[], callback: (error?: Error | null) => void): void => {
    Promise.all(sends).then(() => callback(), (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
  };
  return new Writable({
    objectMode: true,
    highWaterMark: options.highWaterMark ?? 1000,
    write(chunk: WritableChunk, _encoding, callback) {
      settle([sink.send(toMessage(chunk))], callback);
    },
    writev(chunks: { chunk: WritableChunk }[], callback) {
      // One send per message (each is routed by the producer's partitioning); the producer batches them.
      settle(chunks.map(({ chunk }) => sink.send(toMessage(chunk))), callback);
    },
    final(callback) {
      sink.flush().then(() => callback(), (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
    },
  });
}
