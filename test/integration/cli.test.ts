/**
 * The `shoal` CLI (apps/cli, compiled) against the compiled server: the admin, produce and
 * consume commands a user types first.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, startServer, type ServerHandle } from './support/server.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../apps/cli/bin/shoal.js', import.meta.url));

describe('the shoal CLI against a node', () => {
  let server: ServerHandle;

  const shoal = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(process.execPath, [CLI, '--tcp-server-address', server.address, ...args], {
      env: { ...process.env, IGGY_USERNAME: 'iggy', IGGY_PASSWORD: 'iggy' },
    });
    return stdout;
  };

  beforeAll(async () => {
    server = await startServer({ shards: 2 });
  });

  afterAll(async () => {
    expect((await server?.stop()).code).toBe(0);
    if (server !== undefined) removeDataDir(server.dataDir);
  });

  it('creates a stream and a topic, sends and polls a message, shows the cluster', async () => {
    expect(await shoal('stream', 'create', 'cli')).toContain("stream 'cli' created with id 0");
    expect(await shoal('topic', 'create', 'cli', 'events', '2')).toContain('2 partition(s)');
    expect(await shoal('message', 'send', '-p', '1', 'cli', 'events', 'hello from the cli')).toContain('partition 1 starting at offset 0');
    const polled = JSON.parse(await shoal('--json', 'message', 'poll', '--first', 'cli', 'events', '1')) as { messages?: { payload: string }[] };
    expect(JSON.stringify(polled)).toContain('hello from the cli');
    const cluster = await shoal('cluster', 'status');
    expect(cluster).toContain('leader');
    expect(cluster).toContain(`${server.tcp.port}`);
    expect(await shoal('stream', 'list')).toContain('cli');
  });
});
