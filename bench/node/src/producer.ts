/**
 * A lean producer connection: logs in once, then keeps `inFlight` pre-built SendMessages frames
 * outstanding, so the client spends its CPU on socket writes, not on encoding or hashing (the
 * batch and its checksums are built once and resent; each request gets a distinct `timestamp`,
 * which the reply echoes, for latency and correlation).
 */
import { connect, type Socket } from 'node:net';
import {
  FrameDecoder, FRAME_HEADER_SIZE, Operation, REPLY_HEADER, SHOAL_PROTOCOL_VERSION, classifyServerFrame, decodeLoginReplyBody,
  encodeLoginRegisterRequest, encodeRequestFrame, encodeRequestHeader,
} from '@shoal/protocol';

export interface ProducerStats {
  messages: number;
  bytes: number;
  readonly latenciesMicros: number[];
}

export class LeanProducer {
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder({ frameSizeMax: 64 * 1024 * 1024 });
  readonly #client: bigint;
  readonly #sentAt = new Map<bigint, bigint>();
  #session = 0n;
  #timestamp = 1n;
  #onFrame: ((frame: Uint8Array) => void) | null = null;

  private constructor(socket: Socket, client: bigint) {
    this.#socket = socket;
    this.#client = client;
    socket.on('data', (chunk: Buffer) => {
      this.#decoder.push(chunk);
      for (let f = this.#decoder.pull(); f !== null; f = this.#decoder.pull()) this.#onFrame?.(f);
    });
  }

  static async open(host: string, port: number, client: bigint): Promise<LeanProducer> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port, noDelay: true }, () => resolve(s));
      s.once('error', reject);
    });
    const producer = new LeanProducer(socket, client);
    const body = encodeLoginRegisterRequest({
      versionInfo: { protocolVersion: SHOAL_PROTOCOL_VERSION, sdkName: 'shoal-bench', sdkVersion: '0.1.0' },
      username: 'iggy', password: 'iggy', context: '',
    });
    const reply = await producer.#request(encodeRequestFrame({ client, operation: Operation.Register }, body));
    const login = decodeLoginReplyBody(reply.subarray(FRAME_HEADER_SIZE));
    if (!login.ok) throw new Error(`login failed: ${login.reason}`);
    producer.#session = login.value.session;
    return producer;
  }

  /** Sends `bodies` round-robin with `inFlight` outstanding until `until()` is false; counts while `recording()`. */
  run(bodies: readonly { body: Uint8Array; messages: number; bytes: number }[], inFlight: number, until: () => boolean,
    recording: () => boolean, stats: ProducerStats): Promise<void> {
    return new Promise((resolve, reject) => {
      let next = 0;
      let outstanding = 0;
      const sendOne = (): void => {
        const item = bodies[next % bodies.length] as { body: Uint8Array; messages: number; bytes: number };
        next += 1;
        const timestamp = this.#timestamp++;
        const header = encodeRequestHeader({
          size: FRAME_HEADER_SIZE + item.body.length, client: this.#client, operation: Operation.SendMessages, request: 1n,
          session: this.#session, timestamp,
        });
        this.#sentAt.set(timestamp, process.hrtime.bigint());
        outstanding += 1;
        this.#socket.cork();
        this.#socket.write(header);
        this.#socket.write(item.body);
        this.#socket.uncork();
      };
      this.#onFrame = (frame) => {
        const outcome = classifyServerFrame(frame);
        if (outcome.outcome !== 'ok') {
          reject(new Error(`send failed: ${JSON.stringify(outcome)}`));
          return;
        }
        const timestamp = new DataView(frame.buffer, frame.byteOffset).getBigUint64(REPLY_HEADER.timestamp.offset, true);
        const sentAt = this.#sentAt.get(timestamp);
        this.#sentAt.delete(timestamp);
        outstanding -= 1;
        if (sentAt !== undefined && recording()) {
          const item = bodies[Number(timestamp - 1n) % bodies.length];
          stats.latenciesMicros.push(Number(process.hrtime.bigint() - sentAt) / 1000);
          stats.messages += item?.messages ?? 0;
          stats.bytes += item?.bytes ?? 0;
        }
        if (until()) sendOne();
        else if (outstanding === 0) resolve();
      };
      this.#socket.once('close', () => reject(new Error(`connection closed by the server with ${outstanding} batches outstanding`)));
      for (let i = 0; i < inFlight; i++) sendOne();
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #request(frame: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve) => {
      this.#onFrame = (reply) => resolve(reply.slice());
      this.#socket.write(frame);
    });
  }
}
