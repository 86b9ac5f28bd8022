/**
 * The CLI conventions of issue 15 against the in-test server, in-process: named contexts (files,
 * modes, precedence), the password asked on piped stdin, `--output table|json|yaml`, message
 * files (poll --output-file / send --input-file), consumer-group lag, and the completion scripts
 * run in real bash, zsh and fish. The terminal prompt (a real pseudo-terminal) and the same flows
 * against a real node are in test/integration/cli.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeServer } from '../../../packages/client/test/support/fake-server.js';
import { buildProgram, run } from '../src/main.js';
import { commandTree } from '../src/completion.js';
import { FILE_MESSAGE_HEADER, FILE_MESSAGE_HEADER_SIZE, decodeMessageFile } from '../src/message-file.js';
import { partitionLag } from '../src/commands.js';

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let server: FakeServer;
let dead: FakeServer;
let home: string;
let work: string;

/** `shoal` with nothing implied: no address flag, no credentials in the environment. */
async function bare(args: readonly string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const stdin = Object.assign(Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]), { isTTY: false });
  const code = await run(args, {
    stdout: (text) => { stdout += text; },
    stderr: (text) => { stderr += text; },
    env: { SHOAL_HOME: home, ...options.env },
    stdin,
    interrupted: new Promise(() => undefined),
  });
  return { code, stdout, stderr };
}

async function ok(args: readonly string[], options: Parameters<typeof bare>[1] = {}): Promise<string> {
  const result = await bare(args, options);
  expect(result.stderr, `shoal ${args.join(' ')}`).toBe('');
  expect(result.code, `shoal ${args.join(' ')}`).toBe(0);
  return result.stdout;
}

const at = (address: string, ...args: string[]): string[] => ['--tcp-server-address', address, '-u', 'iggy', '-p', 'iggy', ...args];

beforeAll(async () => {
  server = await FakeServer.start({ name: 'node-0' });
  dead = await FakeServer.start({ name: 'dead' });
  await dead.close(); // its port now refuses connections
  home = mkdtempSync(join(tmpdir(), 'shoal-cli-home-'));
  work = mkdtempSync(join(tmpdir(), 'shoal-cli-work-'));
});

afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe('contexts', () => {
  it('create, list, use, show, delete; files are private; commands use the active context', async () => {
    expect(JSON.parse(await ok(['context', 'list', '--json']))).toEqual([{ name: 'default', active: true, address: '127.0.0.1:8090 (default)', username: null, auth: 'none', tls: false }]);
    await ok(['context', 'create', 'fake', '--tcp-server-address', server.address, '--username', 'iggy', '--password', 'iggy', '--timeout', '3s']);
    await ok(['context', 'create', 'asks', '--tcp-server-address', server.address, '--username', 'iggy']);
    const file = join(home, 'contexts.toml');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toContain(`[fake]\ntcp_server_address = "${server.address}"`);

    // Not active yet: the default context has no credentials and the default address.
    expect((await bare(['stream', 'list'])).code).toBe(1);
    expect(await ok(['context', 'use', 'fake'])).toContain('active context: fake');
    expect(readFileSync(join(home, '.active_context'), 'utf8').trim()).toBe('fake');
    expect(statSync(join(home, '.active_context')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await ok(['stream', 'list', '--json']))).toEqual([]);

    const listed = JSON.parse(await ok(['ctx', 'l', '--json'])) as { name: string; active: boolean; auth: string }[];
    expect(listed.map((c) => [c.name, c.active, c.auth])).toEqual([['default', false, 'none'], ['asks', false, 'password (asked)'], ['fake', true, 'password']]);
    const shown = await ok(['context', 'show']);
    expect(shown).toMatch(/name\s+fake/);
    expect(Object.keys(JSON.parse(await ok(['context', 'show', 'fake', '--json'])) as object)).not.toContain('password');

    // Flags override the context: an address flag that refuses connections fails.
    const overridden = await bare(['--tcp-server-address', dead.address, 'stream', 'list']);
    expect(overridden.code).toBe(1);
    expect(overridden.stderr).toMatch(/connect|ECONNREFUSED|establish/i);

    // A context with a user and no password asks for it (piped: the first line of stdin).
    await ok(['context', 'use', 'asks']);
    expect(await ok(['stream', 'list'], { stdin: 'iggy\n' })).toBe('(none)\n');
    expect((await bare(['stream', 'list'])).stderr).toContain("no password for 'iggy'");

    expect(await ok(['context', 'delete', 'asks'])).toContain('active context: default');
    expect(JSON.parse(await ok(['context', 'show', '--json']))).toMatchObject({ name: 'default', active: true });
    await ok(['context', 'delete', 'fake']);
    expect(readFileSync(file, 'utf8').trim()).toBe('');
  });

  it('refuses what the reference refuses', async () => {
    for (const [args, message] of [
      [['context', 'create', 'default'], 'reserved'],
      [['context', 'create', 'no spaces'], 'may only contain'],
      [['context', 'delete', 'default'], 'cannot be deleted'],
      [['context', 'use', 'missing'], 'does not exist'],
      [['context', 'create', 'x', '--password', 'p'], '--password needs --username'],
      [['context', 'create', 'x', '--tcp-server-address', 'nohost'], ''],
    ] as const) {
      const result = await bare(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(message);
    }
    await ok(['context', 'create', 'twice']);
    expect((await bare(['context', 'create', 'twice'])).stderr).toContain('already exists');
    await ok(['context', 'delete', 'twice']);
  });
});

describe('the password prompt (piped stdin)', () => {
  it('takes the first line as the password and leaves the rest to `message send`', async () => {
    await ok([...at(server.address, 'stream', 'create', 'piped')]);
    await ok(['--tcp-server-address', server.address, 'topic', 'create', 'piped', 'events', '1', '--username', 'iggy', '--password', 'iggy']);
    const sent = await ok(['--tcp-server-address', server.address, '-u', 'iggy', 'message', 'send', '-p', '0', 'piped', 'events'], { stdin: 'iggy\nfirst\nsecond\n' });
    expect(sent).toContain('sent 2 message(s)');
    const polled = JSON.parse(await ok([...at(server.address, '--json', 'message', 'poll', '--first', '-m', '10', 'piped', 'events', '0')])) as { messages: { payload: string }[] };
    expect(polled.messages.map((m) => m.payload)).toEqual(['first', 'second']);
  });

  it('a wrong password is refused by the server; no password at all is an error before connecting', async () => {
    const wrong = await bare(['--tcp-server-address', server.address, '-u', 'iggy', 'stream', 'list'], { stdin: 'nope\n' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/InvalidCredentials|credentials/i);
    const none = await bare(['--tcp-server-address', server.address, '-u', 'iggy', 'stream', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no password for 'iggy'");
    const fromEnv = await bare(['--tcp-server-address', server.address, 'stream', 'list'], { env: { IGGY_USERNAME: 'iggy' }, stdin: 'iggy\n' });
    expect(fromEnv.code).toBe(0);
  });
});

describe('--output table|json|yaml', () => {
  it('prints the same records as YAML and JSON, and errors in the chosen format', async () => {
    await ok([...at(server.address, 'stream', 'create', 'formats')]);
    const json = JSON.parse(await ok([...at(server.address, '--output', 'json', 'stream', 'get', 'formats')])) as Record<string, unknown>;
    const yaml = parseYaml(await ok([...at(server.address, '-o', 'yaml', 'stream', 'get', 'formats')])) as Record<string, unknown>;
    expect(yaml).toEqual(json);
    expect(parseYaml(await ok([...at(server.address, 'stream', 'list', '--output', 'yaml')]))).toEqual(JSON.parse(await ok([...at(server.address, 'stream', 'list', '--json')])));
    expect(await ok([...at(server.address, 'stream', 'list', '--output', 'table')])).toMatch(/^id\s+name/m);

    const missing = await bare([...at(server.address, '-o', 'yaml', 'stream', 'get', 'nope')]);
    expect(missing.code).toBe(1);
    expect(parseYaml(missing.stderr)).toMatchObject({ error: { name: 'ShoalInvalidArgumentError' } });
    const both = await bare([...at(server.address, '--json', '--output', 'yaml', 'stream', 'list')]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('contradict');
    expect((await bare([...at(server.address, '-o', 'xml', 'stream', 'list')])).code).toBe(2);
  });
});

describe('message files', () => {
  it('poll --output-file appends the reference layout; send --input-file replays ids, headers and payloads', async () => {
    const cli = (...args: string[]) => ok(at(server.address, ...args));
    await cli('stream', 'create', 'files');
    await cli('topic', 'create', 'files', 'source', '1');
    await cli('topic', 'create', 'files', 'replay', '1');
    await cli('message', 'send', '-p', '0', '-H', 'trace:string:t-1,n:uint32:7', 'files', 'source', 'alpha', 'beta');
    await cli('message', 'send', '-p', '0', 'files', 'source', 'gamma');
    const file = join(work, 'backup.bin');
    expect(await cli('message', 'poll', '--first', '-m', '2', '--output-file', file, 'files', 'source', '0')).toContain('appended');
    await cli('message', 'poll', '--offset', '2', '-m', '5', '--output-file', file, 'files', 'source', '0');

    const records = decodeMessageFile(new Uint8Array(readFileSync(file)));
    const source = JSON.parse(await cli('--json', 'message', 'poll', '--first', '-m', '10', '-s', 'files', 'source', '0')) as { messages: { id: string; offset: number; payload: string; headers: unknown }[] };
    expect(records.map((r) => [r.offset, r.id.toString(), new TextDecoder().decode(r.payload)])).toEqual(source.messages.map((m) => [BigInt(m.offset), m.id, m.payload]));
    expect(readFileSync(file).length).toBe(records.reduce((n, r) => n + FILE_MESSAGE_HEADER_SIZE + r.payload.length + r.rawHeaders.length, 0));

    expect(await cli('message', 'send', '--input-file', file, '-p', '0', 'files', 'replay')).toContain('sent 3 message(s)');
    const replay = JSON.parse(await cli('--json', 'message', 'poll', '--first', '-m', '10', 'files', 'replay', '0')) as typeof source;
    expect(replay.messages.map((m) => [m.id, m.payload, m.headers])).toEqual(source.messages.map((m) => [m.id, m.payload, m.headers]));

    const truncated = join(work, 'truncated.bin');
    writeFileSync(truncated, readFileSync(file).subarray(0, FILE_MESSAGE_HEADER_SIZE + 2));
    const bad = await bare(at(server.address, 'message', 'send', '--input-file', truncated, 'files', 'replay'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('truncated message at byte 0');
    expect((await bare(at(server.address, 'message', 'send', '--input-file', file, 'files', 'replay', 'extra'))).stderr).toContain('--input-file takes its messages');
  });

  it('the file header is the reference IggyMessageHeader: 64 bytes, little-endian, in its field order', () => {
    const H = FILE_MESSAGE_HEADER;
    const order = [H.checksum, H.id, H.offset, H.timestamp, H.originTimestamp, H.userHeadersLength, H.payloadLength, H.reserved];
    let next = 0;
    for (const field of order) {
      expect(field.offset).toBe(next);
      next += field.size;
    }
    expect(next).toBe(FILE_MESSAGE_HEADER_SIZE);
    const bytes = new Uint8Array(64 + 3);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(H.id.offset, 0x1122n, true);
    view.setBigUint64(H.id.offset + 8, 0x33n, true);
    view.setBigUint64(H.offset.offset, 9n, true);
    view.setUint32(H.payloadLength.offset, 3, true);
    bytes.set([0x61, 0x62, 0x63], 64);
    expect(decodeMessageFile(bytes)).toMatchObject([{ id: (0x33n << 64n) | 0x1122n, offset: 9n, payload: new Uint8Array([0x61, 0x62, 0x63]) }]);
  });
});

describe('consumer-group get: lag', () => {
  it('per partition and in total: current offset minus the stored offset, every message when nothing is stored', async () => {
    const cli = (...args: string[]) => ok(at(server.address, ...args));
    await cli('stream', 'create', 'lagging');
    await cli('topic', 'create', 'lagging', 'events', '2');
    await cli('message', 'send', '-p', '0', 'lagging', 'events', 'a', 'b', 'c', 'd', 'e');
    await cli('message', 'send', '-p', '1', 'lagging', 'events', 'x', 'y', 'z');
    await cli('consumer-group', 'create', 'lagging', 'events', 'billing');
    await cli('consumer-offset', 'set', 'billing', 'lagging', 'events', '0', '2', '--kind', 'consumer-group');
    const group = JSON.parse(await cli('--json', 'consumer-group', 'get', 'lagging', 'events', 'billing')) as { lag: number; partitions: { partitionId: number; currentOffset: number; storedOffset: number | null; lag: number }[] };
    expect(group.partitions).toEqual([
      { partitionId: 0, memberId: null, currentOffset: 4, storedOffset: 2, lag: 2 },
      { partitionId: 1, memberId: null, currentOffset: 2, storedOffset: null, lag: 3 },
    ]);
    expect(group.lag).toBe(5);
    expect(await cli('consumer-group', 'get', 'lagging', 'events', 'billing')).toMatch(/lag\s+5[\s\S]*partition\s+member\s+current offset\s+stored offset\s+lag/);
  });

  it('lag is bounded by what the partition holds', () => {
    expect(partitionLag(0n, 0n, null)).toBe(0n);
    expect(partitionLag(10n, 9n, 9n)).toBe(0n);
    expect(partitionLag(3n, 9n, null)).toBe(3n); // older segments deleted
    expect(partitionLag(3n, 9n, 1n)).toBe(3n);
  });
});

describe('shell completion, run in the real shells', () => {
  const scripts = new Map<string, string>();
  beforeAll(async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const path = join(work, `completion.${shell}`);
      writeFileSync(path, await ok(['completion', shell]));
      scripts.set(shell, path);
    }
  });

  const cases: readonly (readonly [string, readonly string[], readonly string[]])[] = [
    ['shoal ', ['stream', 'topic', 'message', 'context', 'completion', 'consumer-group'], []],
    ['shoal st', ['stats', 'stream'], ['topic']],
    ['shoal stream ', ['create', 'list', 'get', 'update', 'delete', 'purge'], ['stream']],
    ['shoal s ', ['create', 'list'], []],
    ['shoal -u iggy message send --', ['--partition-id', '--input-file', '--headers', '--output'], ['--output-file']],
    ['shoal message poll --', ['--output-file', '--first', '--follow'], ['--input-file']],
    ['shoal -o ', ['table', 'json', 'yaml'], []],
    ['shoal consumer-offset get --kind ', ['consumer', 'consumer-group'], []],
    ['shoal context ', ['create', 'use', 'list', 'show', 'delete'], []],
    ['shoal completion ', ['bash', 'zsh', 'fish'], []],
  ];

  function complete(shell: string, line: string): string[] {
    const script = scripts.get(shell) as string;
    const words = line.split(' ');
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const program = shell === 'bash'
      ? `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _shoal; printf '%s\\n' "\${COMPREPLY[@]}"`
      : shell === 'zsh'
        // compadd stands in for the completion system: it prints the candidates matching the word typed.
        ? `compadd() { [[ $1 == -- ]] && shift; local c; for c in "$@"; do [[ $c == \${words[CURRENT]}* ]] && print -r -- $c; done; return 0; }; _files() { print -r -- '<files>'; }; source '${script}'; words=(${quoted}); CURRENT=${words.length}; _shoal`
        : `source '${script}'; complete -C '${line}'`;
    const args = shell === 'zsh' ? ['-f', '-c', program] : shell === 'fish' ? ['--no-config', '-c', program] : ['--norc', '-c', program];
    const result = spawnSync(shell, args, { encoding: 'utf8' });
    expect(result.stderr, `${shell}: ${line}`).toBe('');
    expect(result.status, `${shell}: ${line}`).toBe(0);
    return result.stdout.split('\n').map((l) => l.split('\t')[0] ?? '').filter((l) => l !== '');
  }

  for (const shell of ['bash', 'zsh', 'fish']) {
    it(`${shell}: commands, aliases, flags and flag values`, () => {
      for (const [line, present, absent] of cases) {
        const offered = complete(shell, line);
        for (const word of present) expect(offered, `${shell} "${line}"`).toContain(word);
        for (const word of absent) expect(offered, `${shell} "${line}"`).not.toContain(word);
      }
      const files = complete(shell, `shoal message poll --output-file ${join(work, 'completion.')}`);
      expect(files.some((f) => f.endsWith('completion.bash') || f === '<files>'), `${shell} file completion`).toBe(true);
    });
  }

  it('every command of the program is in the scripts', () => {
    const program = buildProgram({ stdout: () => undefined, stderr: () => undefined, env: {}, stdin: Readable.from([]), interrupted: new Promise(() => undefined) }, { code: 0 });
    const paths = commandTree(program).map((n) => n.path);
    expect(paths.length).toBeGreaterThan(60);
    const bash = readFileSync(scripts.get('bash') as string, 'utf8');
    const fish = readFileSync(scripts.get('fish') as string, 'utf8');
    for (const path of paths.filter((p) => p !== 'shoal')) {
      expect(bash).toContain(`echo "${path}"`);
      expect(fish).toContain(`echo '${path}'`);
    }
    expect(existsSync(scripts.get('zsh') as string)).toBe(true);
  });
});
