import { type AddressInfo, createServer } from 'node:net';

/**
 * Free loopback ports: each is bound on port 0 and released, all held open together so one call
 * never returns the same port twice. (Another process could take one in between; the launchers
 * fail with a clear message then, and a rerun picks new ports.)
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => resolve(server));
  })));
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}
