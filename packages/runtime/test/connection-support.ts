/**
 * A ClientConnection on a real loopback socket, with the peer's end, for the connection tests;
 * `closeConnections` (run it in afterEach) tears down every pair made since the last call.
 */
import { once } from 'node:events';
import { type AddressInfo, Socket, createServer } from 'node:net';
import { ClientConnection, type ConnectionHandler, type ConnectionLimits } from '../src/client-plane/connection.js';

const cleanups: (() => void)[] = [];

export function closeConnections(): void {
  for (const c of cleanups.splice(0)) c();
}

export async function loopbackConnection(limits: ConnectionLimits, handler: ConnectionHandler): Promise<{ connection: ClientConnection; peer: Socket }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  const peer = new Socket();
  peer.connect((server.address() as AddressInfo).port, '127.0.0.1');
  const [socket] = (await accepted) as [Socket];
  cleanups.push(() => {
    peer.destroy();
    socket.destroy();
    server.close();
  });
  const connection = new ClientConnection(socket, { token: 1, slot: 0, clientId: 1 }, limits, handler, { bytesIn: 0, bytesOut: 0 }, 0);
  connection.start();
  return { connection, peer };
}
