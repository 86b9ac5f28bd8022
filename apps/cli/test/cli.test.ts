import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CommandCode } from '@shoal/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterNodeRole, partitionForKey } from '../../../packages/client/src/index.js';
import { FakeServer } from '../../../packages/client/test/support/fake-server.js';
import { run } from '../src/main.js';

/**
 * Every `shoal` command against the in-test server (real loopback socket), run in-process through
 * `run(argv, io)` with captured stdout / stderr, so the whole command surface is covered quickly;
 * bin.test.ts runs the binary itself as a child process.
 */
interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let server: FakeServer;
let home: string;

async function shoal(args: readonly string[], options: { env?: Record<string, string>; stdin?: string; credentials?: boolean; onStdout?: (text: string, kill: () => void) => void } = {}): Promise<Result> {
  const env: Record<string, string> = {
    SHOAL_HOME: home,
    ...(options.credentials === false ? {} : { IGGY_USERNAME: 'iggy', IGGY_PASSWORD: 'iggy' }),
    ...options.env,
  };
  let stdout = '';
  let stderr = '';
  let interrupt: () => void = () => undefined;
  const interrupted = new Promise<void>((resolve) => {
    interrupt = resolve;
  });
  const stdin = Object.assign(Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]), { isTTY: false });
  const code = await run(['--tcp-server-address', server.address, ...args], {
    stdout: (text) => {
      stdout += text;
      options.onStdout?.(stdout, interrupt);
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
    stdin,
    interrupted,
  });
  return { code, stdout, stderr };
}

async function ok(args: readonly string[], options: Parameters<typeof shoal>[1] = {}): Promise<string> {
  const result = await shoal(args, options);
  expect(result.stderr, `shoal ${args.join(' ')}`).toBe('');
  expect(result.code, `shoal ${args.join(' ')}`).toBe(0);
  return result.stdout;
}

async function json<T = unknown>(args: readonly string[], options: Parameters<typeof shoal>[1] = {}): Promise<T> {
  return JSON.parse(await ok([...args, '--json'], options)) as T;
}

beforeAll(async () => {
  server = await FakeServer.start({ name: 'node-0' });
  home = mkdtempSync(join(tmpdir(), 'shoal-cli-'));
});

afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
});

describe('shoal: system commands', () => {
  it('ping, me, stats, options, client list, cluster status: tables and JSON', async () => {
    const [ping, pingJson, me, stats, options, clients] = await Promise.all([
      ok(['ping', '-c', '2']),
      json<{ pings: number[] }>(['ping']),
      ok(['me']),
      json<{ processId: number }>(['stats']),
      ok(['options', 'topic']),
      json<unknown[]>(['client', 'list']),
    ]);
    expect(ping.trim().split('\n')).toHaveLength(2);
    expect(ping).toMatch(/^ping 127\.0\.0\.1:\d+: \d+\.\d+ ms$/m);
    expect(pingJson.pings).toHaveLength(1);
    expect(me).toMatch(/clientId\s+\d+/);
    expect(stats.processId).toBe(42);
    expect(options).toMatch(/segment_size\s+Uint64/);
    expect(clients.length).toBeGreaterThanOrEqual(1);

    const peer = await FakeServer.start({ name: 'node-1' });
    try {
      server.metadata = (s) => ({ name: 'trio', nodes: [s.node(ClusterNodeRole.Leader), peer.node(ClusterNodeRole.Follower, 1)] });
      const [human, machine] = await Promise.all([ok(['cluster', 'status']), json<{ metadataPrimary: string; nodes: { role: string; status: string }[] }>(['cl', 'metadata'])]);
      expect(human).toContain('cluster trio: 2 node(s), metadata primary node-0');
      expect(human).toMatch(/node-1\s+127\.0\.0\.1:\d+\s+follower\s+starting/);
      expect(machine.metadataPrimary).toBe('node-0');
      expect(machine.nodes.map((n) => [n.role, n.status])).toEqual([['leader', 'healthy'], ['follower', 'starting']]);
    } finally {
      server.metadata = null;
      await peer.close();
    }
  });
});

describe('shoal: streams, topics, partitions, groups, users', () => {
  it('stream create / list / get / update / delete', async () => {
    expect(await ok(['stream', 'create', 'dev'])).toMatch(/stream 'dev' created with id \d+/);
    const listed = await json<{ id: number; name: string }[]>(['stream', 'list']);
    expect(listed.map((s) => s.name)).toContain('dev');
    expect(await ok(['s', 'l'])).toMatch(/^id\s+name\s+created\s+topics/m);
    expect(await ok(['stream', 'update', 'dev', 'development'])).toContain("renamed to 'development'");
    expect(await ok(['stream', 'get', 'development'])).toMatch(/name\s+development/);
    await ok(['stream', 'create', 'scratch']);
    await ok(['stream', 'delete', 'scratch']);
    expect((await json<{ name: string }[]>(['stream', 'list'])).map((s) => s.name)).not.toContain('scratch');
  });

  it('topic create with compression, expiry and --set options; list, get, update, partitions, purge, delete', async () => {
    await ok(['stream', 'create', 'tops']);
    expect(await ok(['topic', 'create', 'tops', 'events', '2', 'none', '7d', '-m', '15GB', '--set', 'segment_size=128MiB', '--set', 'enforce_fsync=true'])).toContain("topic 'events' created");
    const stream = [...server.streams.values()].find((s) => s.name === 'tops');
    const options = [...(stream?.topics.values() ?? [])][0]?.options.map((o) => o.key);
    expect(options).toEqual(['compression_algorithm', 'message_expiry', 'max_topic_size', 'segment_size', 'enforce_fsync']);
    const topics = await json<{ name: string; partitionsCount: number }[]>(['topic', 'list', 'tops']);
    expect(topics).toMatchObject([{ name: 'events', partitionsCount: 2 }]);
    await ok(['partition', 'create', 'tops', 'events', '3']);
    const topic = await json<{ partitions: { id: number }[] }>(['topic', 'get', 'tops', 'events']);
    expect(topic.partitions.map((p) => p.id)).toEqual([0, 1, 2, 3, 4]);
    await ok(['partition', 'delete', 'tops', 'events', '1']);
    expect(await ok(['topic', 'get', 'tops', 'events'])).toMatch(/partitions\s+4/);
    await ok(['segment', 'delete', 'tops', 'events', '0', '1']);
    await ok(['topic', 'update', 'tops', 'events', 'events2', 'gzip', 'unlimited']);
    await ok(['topic', 'purge', 'tops', 'events2']);
    await ok(['topic', 'delete', 'tops', 'events2']);
    expect(await json(['topic', 'list', 'tops'])).toEqual([]);
  });

  it('consumer-group create / list / get / delete', async () => {
    await ok(['stream', 'create', 'grp']);
    await ok(['topic', 'create', 'grp', 't', '2']);
    expect(await ok(['consumer-group', 'create', 'grp', 't', 'reporting'])).toContain("consumer group 'reporting' created with id 0");
    expect(await json(['g', 'l', 'grp', 't'])).toEqual([{ id: 0, name: 'reporting', partitions: 2, members: 0 }]);
    expect(await ok(['consumer-group', 'get', 'grp', 't', 'reporting'])).toMatch(/members\s+0/);
    await ok(['consumer-group', 'delete', 'grp', 't', 'reporting']);
    expect(await json(['consumer-group', 'list', 'grp', 't'])).toEqual([]);
  });

  it('user create with permissions, list, get, name, status, password, permissions, delete', async () => {
    expect(await ok(['user', 'create', 'reader', 'Str0ngPass1', '-g', 'p_msg,s_msg', '-s', '3#1:s_msg#2:r_top,p_msg'])).toContain("user 'reader' created");
    const users = await json<{ username: string; status: string }[]>(['user', 'list']);
    expect(users.map((u) => u.username)).toEqual(['iggy', 'reader']);
    const reader = await json<{ permissions: { global: { pollMessages: boolean; manageUsers: boolean }; streams: { streamId: number; topics: { topicId: number; readTopic: boolean }[] }[] } }>(['user', 'get', 'reader']);
    expect(reader.permissions.global).toMatchObject({ pollMessages: true, manageUsers: false });
    expect(reader.permissions.streams[0]?.topics.map((t) => [t.topicId, t.readTopic])).toEqual([[1, false], [2, true]]);
    await ok(['user', 'name', 'reader', 'analyst']);
    await ok(['user', 'status', 'analyst', 'inactive']);
    await ok(['user', 'password', 'analyst', 'Str0ngPass1', 'N3wPass2']);
    await ok(['user', 'permissions', 'analyst']);
    const analyst = await json<{ status: string; permissions: unknown }>(['user', 'get', 'analyst']);
    expect(analyst).toMatchObject({ status: 'inactive', permissions: null });
    await ok(['user', 'delete', 'analyst']);
    expect(await ok(['user', 'list'])).not.toContain('analyst');
  });
});

describe('shoal: messages and offsets', () => {
  it('send from arguments and stdin, with partition, key and headers; poll in both modes; offsets', async () => {
    await ok(['stream', 'create', 'msg']);
    await ok(['topic', 'create', 'msg', 'events', '3']);
    expect(await ok(['message', 'send', '-p', '1', '-H', 'trace-id:string:abc123,retries:uint32:0', 'msg', 'events', 'hello world', 'second'])).toBe('sent 2 message(s) to partition 1 starting at offset 0\n');
    const piped = await json<{ count: number; batches: { partitionId: number }[] }>(['message', 'send', '-p', '1', 'msg', 'events'], { stdin: 'line one\nline two\nline three\n' });
    expect(piped.count).toBe(3);
    const keyed = await json<{ batches: { partitionId: number }[] }>(['message', 'send', '-m', 'sensor-42', 'msg', 'events', 'temperature: 21.5']);
    expect(keyed.batches[0]?.partitionId).toBe(await partitionForKey('sensor-42', 3));

    const table = await ok(['message', 'poll', '--offset', '0', '--message-count', '10', '-s', 'msg', 'events', '1']);
    expect(table).toContain('polled 5 message(s) from partition 1');
    expect(table).toMatch(/0\s+\S+\s+\d+\s+11\s+hello world\s+trace-id:string:abc123, retries:uint32:0/);
    const polled = await json<{ messages: { offset: number; payload: string; headers: Record<string, { kind: string; value: unknown }> }[] }>(['message', 'poll', '--first', '-m', '10', 'msg', 'events', '1']);
    expect(polled.messages.map((m) => m.payload)).toEqual(['hello world', 'second', 'line one', 'line two', 'line three']);
    expect(polled.messages[0]?.headers['retries']).toEqual({ kind: 'uint32', value: 0 });

    // --next with --auto-commit continues where the consumer left off.
    const first = await json<{ messages: { offset: number }[] }>(['message', 'poll', '--next', '-a', '-c', 'reporting', '-m', '2', 'msg', 'events', '1']);
    const second = await json<{ messages: { offset: number }[] }>(['message', 'poll', '--next', '-a', '-c', 'reporting', '-m', '2', 'msg', 'events', '1']);
    expect([...first.messages, ...second.messages].map((m) => m.offset)).toEqual([0, 1, 2, 3]);

    expect(await ok(['consumer-offset', 'get', 'reporting', 'msg', 'events', '1'])).toMatch(/storedOffset\s+3/);
    await ok(['consumer-offset', 'set', '7', 'msg', 'events', '1', '1']);
    expect(await json(['o', 'g', '7', 'msg', 'events', '1'])).toMatchObject({ consumer: '7', storedOffset: 1, currentOffset: 4 });
    expect(await ok(['consumer-offset', 'get', '99', 'msg', 'events', '1'])).toContain('no offset stored');
  });

  it('poll --follow prints messages as they arrive (NDJSON), stops at --limit or on Ctrl-C', async () => {
    await ok(['stream', 'create', 'live']);
    await ok(['topic', 'create', 'live', 't', '1']);
    await ok(['message', 'send', '-p', '0', 'live', 't', 'one']);
    const limited = shoal(['message', 'poll', '--first', '--follow', '--limit', '3', '--json', 'live', 't', '0']);
    setTimeout(() => void shoal(['message', 'send', '-p', '0', 'live', 't', 'two', 'three']), 300);
    const result = await limited;
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { payload: string }).payload)).toEqual(['one', 'two', 'three']);

    const interrupted = await shoal(['message', 'poll', '--first', '--follow', 'live', 't', '0'], {
      onStdout: (text, kill) => {
        if (text.includes('payload=three')) kill();
      },
    });
    expect(interrupted.code).toBe(0);
    expect(interrupted.stdout).toContain('payload=three');
    expect(interrupted.stdout).toContain('offset=0');
  });
});

describe('shoal: login, credentials, errors', () => {
  it('login checks credentials and stores nothing by default', async () => {
    expect(await ok(['login'])).toMatch(/logged in to 127\.0\.0\.1:\d+ as user 0 .*nothing stored/);
    expect(existsSync(join(home, 'session.json'))).toBe(false);
  });

  it('login --store-token keeps a token (mode 0600) that later commands use; logout deletes it', async () => {
    const stored = await json<{ path: string; tokenName: string }>(['login', '1h', '--store-token']);
    expect(statSync(stored.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(stored.path, 'utf8')).not.toContain('iggy:iggy');
    const patLogins = server.requestsOf(CommandCode.LoginRegisterWithPat).length;
    await ok(['stream', 'list'], { credentials: false });
    expect(server.requestsOf(CommandCode.LoginRegisterWithPat).length).toBe(patLogins + 1);
    expect(await ok(['logout'], { credentials: false })).toContain(`token '${stored.tokenName}' deleted`);
    expect(existsSync(stored.path)).toBe(false);
    expect([...server.tokens.values()].map((t) => t.name)).not.toContain(stored.tokenName);
  });

  it('a connection string carries the credentials', async () => {
    expect(await ok(['--url', server.url('iggy:iggy'), 'ping'], { credentials: false })).toMatch(/^ping/);
  });

  it('wrong credentials exit 1 with the error; --json reports it as JSON on stderr', async () => {
    const human = await shoal(['stream', 'list'], { env: { IGGY_PASSWORD: 'wrong' } });
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^error: session evicted: InvalidCredentials.*\[InvalidCredentials 42\]/);
    const machine = await shoal(['stream', 'list', '--json'], { env: { IGGY_PASSWORD: 'wrong' } });
    expect(machine.code).toBe(1);
    expect(JSON.parse(machine.stderr)).toMatchObject({ error: { name: 'ShoalEvictionError', code: 42, codeName: 'InvalidCredentials', retriable: false } });
  });

  it('server errors, bad input and usage errors', async () => {
    const missing = await shoal(['stream', 'delete', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('[StreamNameNotFound 1010]');
    const noStrategy = await shoal(['message', 'poll', 'msg', 'events', '0']);
    expect(noStrategy.code).toBe(1);
    expect(noStrategy.stderr).toContain('exactly one polling strategy is required');
    const usage = await shoal(['topic', 'create', 'only-stream']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'name'");
  });
});
