/**
 * Worker side of the fd hand-off test: adopts a handed-off replica socket, serves it with a
 * PeerConnection, and reports what it sees. Messages are typed both ways.
 */
import { parentPort } from 'node:worker_threads';
import { PeerConnection, adoptHandedOff, type HandOffPackage } from '../src/replica-plane/index.js';
import { commitFrame, commitOf } from './replica-plane-support.js';

export type HandOffCommand =
  | { readonly kind: 'adopt'; readonly peer: number; readonly replicaCount: number; readonly pkg: HandOffPackage }
  | { readonly kind: 'send'; readonly commit: bigint }
  | { readonly kind: 'close' };

export type HandOffEvent =
  | { readonly kind: 'adopted'; readonly peer: number; readonly leftoverBytes: number }
  | { readonly kind: 'frames'; readonly peer: number; readonly commits: readonly bigint[] }
  | { readonly kind: 'closed'; readonly peer: number; readonly reason: string };

const port = parentPort;
if (port === null) throw new Error('must run as a worker');
let connection: PeerConnection | null = null;

function post(event: HandOffEvent): void {
  port?.postMessage(event);
}

port.on('message', (command: HandOffCommand) => {
  switch (command.kind) {
    case 'adopt': {
      const { socket, leftover } = adoptHandedOff(command.pkg);
      const adopted = new PeerConnection({
        peer: command.peer,
        socket,
        leftover,
        replicaCount: command.replicaCount,
        messageSizeMax: 64 * 1024 * 1024,
        queueCapacity: 256,
        maxBatch: 256,
        closeTimeoutMs: 500,
        onFrames: (peer, frames) => post({ kind: 'frames', peer, commits: frames.map((f) => commitOf(f.bytes)) }),
        onClose: (peer, reason) => {
          post({ kind: 'closed', peer, reason });
          connection = null;
        },
      });
      connection = adopted;
      post({ kind: 'adopted', peer: command.peer, leftoverBytes: leftover.length });
      adopted.start();
      break;
    }
    case 'send':
      connection?.send(commitFrame(1, command.commit));
      break;
    case 'close':
      connection?.close();
      break;
  }
});
