import { Argument, type Command, Option } from 'commander';
import {
  type ClusterView, type HeaderInput, type Message, type PollingStrategyInput, type ProducerPartitioning, type ReceivedMessage,
  ShoalInvalidArgumentError, formatAddress,
} from '@shoal/client';
import {
  type HeaderValue, type StreamInfo, type TopicInfo, headerKindName, SnapshotType,
} from '@shoal/protocol';
import { U64_MAX } from '@shoal/stdx';
import { removeStoredSession, readStoredSession, writeStoredSession } from './context.js';
import type { Action, Context } from './main.js';
import { formatBytes, formatExpiry, isoFromMicros, renderTable, stringify } from './output.js';
import {
  parseCount, parseExpiryMicros, parseHeaders, parseId, parseOffset, parsePermissions, parseSet, parseSize,
} from './parse.js';

type Leaf = (command: Command, action: Action) => Command;

const str = (value: unknown): string => String(value);
const opt = <T>(value: unknown): T => value as T;
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerCommands(program: Command, leaf: Leaf): void {
  registerSystem(program, leaf);
  registerSession(program, leaf);
  registerStreams(program, leaf);
  registerTopics(program, leaf);
  registerPartitions(program, leaf);
  registerUsers(program, leaf);
  registerTokens(program, leaf);
  registerGroups(program, leaf);
  registerOffsets(program, leaf);
  registerMessages(program, leaf);
}

// ── system ─────────────────────────────────────────────────────────────────────────────────────

function registerSystem(program: Command, leaf: Leaf): void {
  leaf(program.command('ping').description('ping the server and measure the round trip').option('-c, --count <n>', 'number of pings', '1'), async (ctx, options) => {
    const count = parseCount(opt<{ count: string }>(options).count, 'count');
    const client = ctx.client();
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await client.ping();
      const ms = performance.now() - started;
      times.push(Math.round(ms * 1000) / 1000);
      if (!ctx.out.json) ctx.out.message(`ping ${formatAddress(ctx.target.address)}: ${ms.toFixed(3)} ms`);
    }
    if (ctx.out.json) ctx.out.record({ address: formatAddress(ctx.target.address), pings: times, averageMs: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length) });
  });

  leaf(program.command('me').description('show the current connection: client id, user, address'), async (ctx) => {
    const me = await ctx.client().getMe();
    ctx.out.record({ clientId: me.clientId, userId: me.userId, transport: me.transport === 1 ? 'tcp' : me.transport, address: me.address, server: formatAddress(ctx.target.address), consumerGroups: me.consumerGroupsCount });
  });

  leaf(program.command('stats').description('server statistics'), async (ctx) => {
    const s = await ctx.client().getStats();
    if (ctx.out.json) {
      ctx.out.record({ ...s });
      return;
    }
    ctx.out.record({
      'Process ID': s.processId, 'CPU usage': `${s.cpuUsage.toFixed(2)} %`, 'Memory usage': formatBytes(s.memoryUsage), 'Run time (s)': s.runTime,
      'Streams': s.streamsCount, 'Topics': s.topicsCount, 'Partitions': s.partitionsCount, 'Segments': s.segmentsCount,
      'Messages': s.messagesCount, 'Messages size': formatBytes(s.messagesSizeBytes), 'Clients': s.clientsCount,
      'Consumer groups': s.consumerGroupsCount, 'Hostname': s.hostname, 'OS': `${s.osName} ${s.osVersion}`, 'Server version': s.iggyServerVersion,
    });
  });

  const cluster = program.command('cluster').alias('cl').description('cluster operations');
  const status: Action = async (ctx) => {
    const view = await ctx.client().getClusterMetadata();
    const led = partitionsLedByNode(view);
    const nodes = view.nodes.map((n) => ({
      name: n.name, address: formatAddress(n.address), role: n.role, status: n.status, metadataPrimary: view.leader?.name === n.name,
      partitionPrimaries: led.get(n.name) ?? 0,
    }));
    if (ctx.out.json) {
      ctx.out.record({ name: view.name, metadataPrimary: view.leader?.name ?? null, nodes });
      return;
    }
    ctx.out.message(`cluster ${view.name}: ${view.nodes.length} node(s), metadata primary ${view.leader?.name ?? 'none (view change in progress)'}`);
    ctx.out.message(renderTable(nodes.map((n) => ({
      Name: n.name, Address: n.address, Role: n.role, Status: n.status, Primary: n.metadataPrimary ? 'metadata' : '', 'Partitions led': String(n.partitionPrimaries),
    }))));
  };
  leaf(cluster.command('status').alias('s').description('nodes, roles, statuses and the metadata primary'), status);
  leaf(cluster.command('metadata').alias('m').description('same as `cluster status`'), status);

  leaf(program.command('options').description('the option catalog of a scope (keys `--set` accepts)').argument('<scope>', 'topic, stream or user'), async (ctx, scope) => {
    const s = str(scope);
    if (s !== 'topic' && s !== 'stream' && s !== 'user') throw new ShoalInvalidArgumentError(`scope must be topic, stream or user (got '${s}')`);
    const entries = await ctx.client().describeOptions(s);
    ctx.out.table(entries.map((e) => ({ key: e.key, kind: headerKindName(e.kind) ?? e.kind, default: e.defaultValue.length === 0 ? '' : Buffer.from(e.defaultValue).toString('hex'), description: e.description })));
  });

  const client = program.command('client').alias('c').description('connected clients');
  leaf(client.command('list').alias('l').description('list connected clients'), async (ctx) => {
    const clients = await ctx.client().getClients();
    ctx.out.table(clients.map((c) => ({ id: c.clientId, userId: c.userId, transport: c.transport === 1 ? 'tcp' : c.transport, address: c.address, consumerGroups: c.consumerGroupsCount })));
  });
  leaf(client.command('get').alias('g').description('one client').argument('<client-id>'), async (ctx, id) => {
    const c = await ctx.client().getClient(parseCount(str(id), 'client id'));
    if (c === null) throw new ShoalInvalidArgumentError(`client ${str(id)} not found`);
    ctx.out.record({ id: c.clientId, userId: c.userId, transport: c.transport, address: c.address, consumerGroups: c.consumerGroups });
  });

  leaf(program.command('snapshot').description('collect server troubleshooting data (reports the archive size)')
    .option('-c, --compression <code>', 'compression code 1..6 (1 = stored)', '1'), async (ctx, options) => {
    const bytes = await ctx.client().getSnapshot({ compression: parseCount(opt<{ compression: string }>(options).compression, 'compression'), types: [SnapshotType.All] });
    ctx.out.message(`snapshot: ${bytes.length} bytes`, { bytes: bytes.length });
  });
}

// ── login / logout ─────────────────────────────────────────────────────────────────────────────

function registerSession(program: Command, leaf: Leaf): void {
  leaf(program.command('login').alias('li').description('check credentials; with --store-token keep a personal access token for later commands')
    .argument('[expiry...]', 'token expiry with --store-token (default 15m; none = never)')
    .option('--store-token', 'create a personal access token and store it in $SHOAL_HOME/session.json (mode 0600)'), async (ctx, expiryWords, options) => {
    const { credentials } = ctx.target;
    if (credentials === null) throw new ShoalInvalidArgumentError('no credentials: pass --username/--password, --token, a --url with credentials, or set IGGY_USERNAME/IGGY_PASSWORD');
    const client = ctx.anonymousClient();
    const login = credentials.kind === 'password' ? await client.login(credentials.username, credentials.password) : await client.loginWithToken(credentials.token);
    const address = formatAddress(ctx.target.address);
    if (opt<{ storeToken?: boolean }>(options).storeToken !== true) {
      await client.logout();
      ctx.out.message(`logged in to ${address} as user ${login.userId} (server ${login.serverVersion}); nothing stored`, { address, userId: login.userId, serverVersion: login.serverVersion, stored: false });
      return;
    }
    const words = expiryWords as string[];
    const expiry = words.length === 0 ? 15n * 60n * 1_000_000n : parseExpiryMicros(words) ?? U64_MAX;
    const never = expiry === U64_MAX;
    const tokenName = `shoal-cli-${Date.now().toString(36)}`;
    const token = await client.token.create({ name: tokenName, expiry });
    const expiresAt = never ? 0n : BigInt(Date.now()) * 1000n + expiry;
    const path = writeStoredSession(ctx.io.env, { address, tokenName, token, expiresAt: expiresAt.toString() });
    await client.logout();
    ctx.out.message(`logged in to ${address} as user ${login.userId}; token '${tokenName}' stored in ${path} (expires ${never ? 'never' : isoFromMicros(expiresAt)})`,
      { address, userId: login.userId, stored: true, tokenName, path, expiresAt });
  });

  leaf(program.command('logout').alias('lo').description('delete the stored token (on the server and on disk)'), async (ctx) => {
    const stored = readStoredSession(ctx.io.env);
    if (stored === null) {
      ctx.out.message('no stored session', { removed: false });
      return;
    }
    try {
      const client = ctx.anonymousClient();
      await client.loginWithToken(stored.token);
      await client.token.delete({ name: stored.tokenName });
    } finally {
      removeStoredSession(ctx.io.env);
    }
    ctx.out.message(`logged out: token '${stored.tokenName}' deleted`, { removed: true, tokenName: stored.tokenName });
  });
}

// ── streams, topics, partitions, segments ─────────────────────────────────────────────────────

function streamRow(s: StreamInfo): Record<string, unknown> {
  return { id: s.id, name: s.name, created: isoFromMicros(s.createdAt), topics: s.topicsCount, messages: s.messagesCount, size: formatBytes(s.sizeBytes) };
}

function topicRow(t: TopicInfo): Record<string, unknown> {
  return {
    id: t.id, name: t.name, partitions: t.partitionsCount, created: isoFromMicros(t.createdAt), messages: t.messagesCount,
    size: formatBytes(t.sizeBytes), expiry: formatExpiry(t.messageExpiry), maxSize: t.maxTopicSize === 0n ? 'unlimited' : formatBytes(t.maxTopicSize),
    compression: t.compressionAlgorithm === 2 ? 'gzip' : 'none',
  };
}

function registerStreams(program: Command, leaf: Leaf): void {
  const stream = program.command('stream').alias('s').description('stream operations');
  leaf(stream.command('create').alias('c').description('create a stream').argument('<name>'), async (ctx, name) => {
    const s = await ctx.client().stream.create({ name: str(name) });
    ctx.out.message(`stream '${s.name}' created with id ${s.id}`, s);
  });
  leaf(stream.command('list').alias('l').description('list streams'), async (ctx) => {
    const streams = await ctx.client().stream.list();
    if (ctx.out.json) ctx.out.table(streams as unknown as Record<string, unknown>[]);
    else ctx.out.table(streams.map(streamRow));
  });
  leaf(stream.command('get').alias('g').description('one stream').argument('<stream>', 'id or name'), async (ctx, id) => {
    const s = await ctx.client().stream.get({ streamId: parseId(str(id)) });
    if (s === null) throw new ShoalInvalidArgumentError(`stream '${str(id)}' not found`);
    if (ctx.out.json) {
      ctx.out.record({ ...s });
      return;
    }
    ctx.out.record(streamRow(s));
    if (s.topics.length > 0) ctx.out.message(`\n${renderTable(s.topics.map(topicRow))}`);
  });
  leaf(stream.command('update').alias('u').description('rename a stream').argument('<stream>').argument('<name>'), async (ctx, id, name) => {
    await ctx.client().stream.update({ streamId: parseId(str(id)), name: str(name) });
    ctx.out.message(`stream '${str(id)}' renamed to '${str(name)}'`, { updated: true });
  });
  leaf(stream.command('delete').alias('d').description('delete a stream').argument('<stream>'), async (ctx, id) => {
    await ctx.client().stream.delete({ streamId: parseId(str(id)) });
    ctx.out.message(`stream '${str(id)}' deleted`, { deleted: true });
  });
  leaf(stream.command('purge').alias('p').description('remove every message of a stream').argument('<stream>'), async (ctx, id) => {
    await ctx.client().stream.purge({ streamId: parseId(str(id)) });
    ctx.out.message(`stream '${str(id)}' purged`, { purged: true });
  });
}

interface TopicFlags {
  readonly maxTopicSize?: string;
  readonly set?: string[];
}

function topicSettings(compression: unknown, expiryWords: unknown, flags: TopicFlags): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  if (compression !== undefined) {
    const c = str(compression);
    if (c !== 'none' && c !== 'gzip') throw new ShoalInvalidArgumentError(`compression must be none or gzip (got '${c}')`);
    settings['compressionAlgorithm'] = c;
  }
  const expiry = parseExpiryMicros((expiryWords as string[] | undefined) ?? []);
  if (expiry !== undefined) settings['messageExpiry'] = expiry;
  if (flags.maxTopicSize !== undefined) {
    const size = parseSize(flags.maxTopicSize);
    if (size !== undefined) settings['maxTopicSize'] = size;
  }
  const extra = parseSet(flags.set ?? []);
  if (Object.keys(extra).length > 0) settings['options'] = coerceOptions(extra);
  return settings;
}

/** `--set` values: booleans and plain integers become typed; anything else is sent as text for the server to parse. */
function coerceOptions(values: Record<string, string>): Record<string, string | boolean | bigint> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? BigInt(v) : v]));
}

function registerTopics(program: Command, leaf: Leaf): void {
  const topic = program.command('topic').alias('t').description('topic operations');
  leaf(topic.command('create').alias('c').description('create a topic')
    .argument('<stream>').argument('<name>').argument('<partitions-count>').argument('[compression]', 'none or gzip').argument('[expiry...]', 'message expiry, e.g. 7d, unlimited')
    .option('-m, --max-topic-size <size>', 'e.g. 15GB, unlimited')
    .option('--set <key=value>', 'additional topic option (repeatable; see `shoal options topic`)', collect), async (ctx, stream, name, partitions, compression, expiry, flags) => {
    const t = await ctx.client().topic.create({
      streamId: parseId(str(stream)), name: str(name), partitionsCount: parseCount(str(partitions), 'partitions count'),
      ...topicSettings(compression, expiry, opt<TopicFlags>(flags)),
    });
    ctx.out.message(`topic '${t.name}' created with id ${t.id} and ${t.partitionsCount} partition(s) in stream '${str(stream)}'`, t);
  });
  leaf(topic.command('list').alias('l').description('list the topics of a stream').argument('<stream>'), async (ctx, stream) => {
    const topics = await ctx.client().topic.list({ streamId: parseId(str(stream)) });
    if (ctx.out.json) ctx.out.table(topics as unknown as Record<string, unknown>[]);
    else ctx.out.table(topics.map(topicRow));
  });
  leaf(topic.command('get').alias('g').description('one topic with its partitions').argument('<stream>').argument('<topic>'), async (ctx, stream, id) => {
    const t = await ctx.client().topic.get({ streamId: parseId(str(stream)), topicId: parseId(str(id)) });
    if (t === null) throw new ShoalInvalidArgumentError(`topic '${str(id)}' not found in stream '${str(stream)}'`);
    if (ctx.out.json) {
      ctx.out.record({ ...t });
      return;
    }
    ctx.out.record(topicRow(t));
    ctx.out.message(`\n${renderTable(t.partitions.map((p) => ({ partition: p.id, segments: p.segmentsCount, currentOffset: p.currentOffset, messages: p.messagesCount, size: formatBytes(p.sizeBytes) })))}`);
  });
  leaf(topic.command('update').alias('u').description('rename a topic and update compression, expiry, max size')
    .argument('<stream>').argument('<topic>').argument('<name>').argument('[compression]').argument('[expiry...]')
    .option('-m, --max-topic-size <size>', 'e.g. 15GB, unlimited'), async (ctx, stream, id, name, compression, expiry, flags) => {
    await ctx.client().topic.update({ streamId: parseId(str(stream)), topicId: parseId(str(id)), name: str(name), ...topicSettings(compression, expiry, opt<TopicFlags>(flags)) });
    ctx.out.message(`topic '${str(id)}' updated`, { updated: true });
  });
  leaf(topic.command('delete').alias('d').description('delete a topic').argument('<stream>').argument('<topic>'), async (ctx, stream, id) => {
    await ctx.client().topic.delete({ streamId: parseId(str(stream)), topicId: parseId(str(id)) });
    ctx.out.message(`topic '${str(id)}' deleted`, { deleted: true });
  });
  leaf(topic.command('purge').alias('p').description('remove every message of a topic').argument('<stream>').argument('<topic>'), async (ctx, stream, id) => {
    await ctx.client().topic.purge({ streamId: parseId(str(stream)), topicId: parseId(str(id)) });
    ctx.out.message(`topic '${str(id)}' purged`, { purged: true });
  });
}

function registerPartitions(program: Command, leaf: Leaf): void {
  const partition = program.command('partition').alias('p').description('partition operations');
  leaf(partition.command('create').alias('c').description('add partitions').argument('<stream>').argument('<topic>').argument('<count>'), async (ctx, stream, topic, count) => {
    await ctx.client().partition.create({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitionsCount: parseCount(str(count), 'count') });
    ctx.out.message(`${str(count)} partition(s) added to topic '${str(topic)}'`, { created: Number(count) });
  });
  leaf(partition.command('delete').alias('d').description('remove the last partitions').argument('<stream>').argument('<topic>').argument('<count>'), async (ctx, stream, topic, count) => {
    await ctx.client().partition.delete({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitionsCount: parseCount(str(count), 'count') });
    ctx.out.message(`${str(count)} partition(s) removed from topic '${str(topic)}'`, { deleted: Number(count) });
  });
  const segment = program.command('segment').alias('seg').description('segment operations');
  leaf(segment.command('delete').alias('d').description('delete the oldest sealed segments of a partition')
    .argument('<stream>').argument('<topic>').argument('<partition>').argument('<count>'), async (ctx, stream, topic, partition, count) => {
    await ctx.client().segment.delete({
      streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitionId: parseCount(str(partition), 'partition'), segmentsCount: parseCount(str(count), 'count'),
    });
    ctx.out.message(`${str(count)} segment(s) deleted from partition ${str(partition)}`, { deleted: Number(count) });
  });
}

// ── users and tokens ───────────────────────────────────────────────────────────────────────────

const userStatus = (status: number): string => (status === 1 ? 'active' : 'inactive');

function registerUsers(program: Command, leaf: Leaf): void {
  const user = program.command('user').alias('u').description('user operations');
  leaf(user.command('create').alias('c').description('create a user').argument('<username>').argument('<password>')
    .option('-g, --global-permissions <perms>', 'comma-separated global permissions (e.g. p_msg,s_msg)')
    .option('-s, --stream-permissions <spec>', 'STREAM_ID[:PERMS][#TOPIC_ID[:PERMS]] (repeatable)', collect)
    .addOption(new Option('-u, --user-status <status>', 'initial status').choices(['active', 'inactive']).default('active')), async (ctx, username, password, flags) => {
    const f = opt<{ globalPermissions?: string; streamPermissions?: string[]; userStatus: 'active' | 'inactive' }>(flags);
    const u = await ctx.client().user.create({ username: str(username), password: str(password), status: f.userStatus, permissions: parsePermissions(f.globalPermissions, f.streamPermissions ?? []) });
    ctx.out.message(`user '${u.username}' created with id ${u.id}`, u);
  });
  leaf(user.command('list').alias('l').description('list users'), async (ctx) => {
    const users = await ctx.client().user.list();
    ctx.out.table(users.map((u) => ({ id: u.id, username: u.username, status: userStatus(u.status), created: ctx.out.json ? u.createdAt : isoFromMicros(u.createdAt) })));
  });
  leaf(user.command('get').alias('g').description('one user with permissions').argument('<user>'), async (ctx, id) => {
    const u = await ctx.client().user.get({ userId: parseId(str(id)) });
    if (u === null) throw new ShoalInvalidArgumentError(`user '${str(id)}' not found`);
    ctx.out.record({ id: u.id, username: u.username, status: userStatus(u.status), created: ctx.out.json ? u.createdAt : isoFromMicros(u.createdAt), permissions: ctx.out.json ? u.permissions : u.permissions === null ? 'none' : stringify(u.permissions, false) });
  });
  leaf(user.command('name').description('rename a user').argument('<user>').argument('<new-name>'), async (ctx, id, name) => {
    await ctx.client().user.update({ userId: parseId(str(id)), username: str(name) });
    ctx.out.message(`user '${str(id)}' renamed to '${str(name)}'`, { updated: true });
  });
  leaf(user.command('status').description('activate or deactivate a user').argument('<user>').addArgument(new Argument('<status>', 'active or inactive').choices(['active', 'inactive'])), async (ctx, id, status) => {
    await ctx.client().user.update({ userId: parseId(str(id)), status: str(status) as 'active' | 'inactive' });
    ctx.out.message(`user '${str(id)}' is now ${str(status)}`, { updated: true });
  });
  leaf(user.command('password').description('change a password').argument('<user>').argument('<current-password>').argument('<new-password>'), async (ctx, id, current, next) => {
    await ctx.client().user.changePassword({ userId: parseId(str(id)), currentPassword: str(current), newPassword: str(next) });
    ctx.out.message(`password of '${str(id)}' changed`, { updated: true });
  });
  leaf(user.command('permissions').description('replace permissions (no flags = remove all)').argument('<user>')
    .option('-g, --global-permissions <perms>', 'comma-separated global permissions')
    .option('-s, --stream-permissions <spec>', 'STREAM_ID[:PERMS][#TOPIC_ID[:PERMS]] (repeatable)', collect), async (ctx, id, flags) => {
    const f = opt<{ globalPermissions?: string; streamPermissions?: string[] }>(flags);
    await ctx.client().user.updatePermissions({ userId: parseId(str(id)), permissions: parsePermissions(f.globalPermissions, f.streamPermissions ?? []) });
    ctx.out.message(`permissions of '${str(id)}' replaced`, { updated: true });
  });
  leaf(user.command('delete').alias('d').description('delete a user').argument('<user>'), async (ctx, id) => {
    await ctx.client().user.delete({ userId: parseId(str(id)) });
    ctx.out.message(`user '${str(id)}' deleted`, { deleted: true });
  });
}

function registerTokens(program: Command, leaf: Leaf): void {
  const pat = program.command('pat').description('personal access tokens of the current user');
  leaf(pat.command('create').alias('c').description('create a token (printed once)').argument('<name>').argument('[expiry...]', 'e.g. 7d; default: server default'), async (ctx, name, expiry) => {
    const micros = parseExpiryMicros(expiry as string[]);
    const token = await ctx.client().token.create({ name: str(name), ...(micros === undefined ? {} : { expiry: micros }) });
    ctx.out.message(`token '${str(name)}': ${token}`, { name: str(name), token });
  });
  leaf(pat.command('list').alias('l').description('list tokens'), async (ctx) => {
    const tokens = await ctx.client().token.list();
    ctx.out.table(tokens.map((t) => ({ name: t.name, expiresAt: ctx.out.json ? t.expiryAt : t.expiryAt === 0n ? 'never' : isoFromMicros(t.expiryAt) })));
  });
  leaf(pat.command('delete').alias('d').description('delete a token').argument('<name>'), async (ctx, name) => {
    await ctx.client().token.delete({ name: str(name) });
    ctx.out.message(`token '${str(name)}' deleted`, { deleted: true });
  });
}

// ── consumer groups and offsets ────────────────────────────────────────────────────────────────

function registerGroups(program: Command, leaf: Leaf): void {
  const group = program.command('consumer-group').alias('g').description('consumer group operations');
  leaf(group.command('create').alias('c').description('create a consumer group').argument('<stream>').argument('<topic>').argument('<name>'), async (ctx, stream, topic, name) => {
    const g = await ctx.client().group.create({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), name: str(name) });
    ctx.out.message(`consumer group '${g.name}' created with id ${g.id}`, g);
  });
  leaf(group.command('list').alias('l').description('list the groups of a topic').argument('<stream>').argument('<topic>'), async (ctx, stream, topic) => {
    const groups = await ctx.client().group.list({ streamId: parseId(str(stream)), topicId: parseId(str(topic)) });
    ctx.out.table(groups.map((g) => ({ id: g.id, name: g.name, partitions: g.partitionsCount, members: g.membersCount })));
  });
  leaf(group.command('get').alias('g').description('one group with its members').argument('<stream>').argument('<topic>').argument('<group>'), async (ctx, stream, topic, id) => {
    const g = await ctx.client().group.get({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), groupId: parseId(str(id)) });
    if (g === null) throw new ShoalInvalidArgumentError(`consumer group '${str(id)}' not found`);
    if (ctx.out.json) {
      ctx.out.record({ ...g });
      return;
    }
    ctx.out.record({ id: g.id, name: g.name, partitions: g.partitionsCount, members: g.membersCount });
    if (g.members.length > 0) ctx.out.message(`\n${renderTable(g.members.map((m) => ({ member: m.id, partitions: m.partitions.join(', ') })))}`);
  });
  leaf(group.command('delete').alias('d').description('delete a consumer group').argument('<stream>').argument('<topic>').argument('<group>'), async (ctx, stream, topic, id) => {
    await ctx.client().group.delete({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), groupId: parseId(str(id)) });
    ctx.out.message(`consumer group '${str(id)}' deleted`, { deleted: true });
  });
}

const kindOption = (): Option => new Option('-k, --kind <kind>', 'consumer or consumer-group').choices(['consumer', 'consumer-group']).default('consumer');

function registerOffsets(program: Command, leaf: Leaf): void {
  const offset = program.command('consumer-offset').alias('o').description('stored consumer offsets');
  leaf(offset.command('get').alias('g').description('the stored offset of a consumer on one partition')
    .argument('<consumer>').argument('<stream>').argument('<topic>').argument('<partition>').addOption(kindOption()), async (ctx, consumer, stream, topic, partition, flags) => {
    const kind = opt<{ kind: string }>(flags).kind === 'consumer-group' ? 'consumer_group' : 'consumer';
    const info = await ctx.client().offset.get({
      consumer: { kind, id: parseId(str(consumer)) }, streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitionId: parseCount(str(partition), 'partition'),
    });
    if (info === null) {
      ctx.out.message(`no offset stored for ${kind} '${str(consumer)}' on partition ${str(partition)}`, null);
      return;
    }
    ctx.out.record({ consumer: str(consumer), kind, partition: info.partitionId, currentOffset: info.currentOffset, storedOffset: info.storedOffset });
  });
  leaf(offset.command('set').alias('s').description('store an offset for a consumer on one partition')
    .argument('<consumer>').argument('<stream>').argument('<topic>').argument('<partition>').argument('<offset>').addOption(kindOption()), async (ctx, consumer, stream, topic, partition, value, flags) => {
    const kind = opt<{ kind: string }>(flags).kind === 'consumer-group' ? 'consumer_group' : 'consumer';
    await ctx.client().offset.store({
      consumer: { kind, id: parseId(str(consumer)) }, streamId: parseId(str(stream)), topicId: parseId(str(topic)),
      partitionId: parseCount(str(partition), 'partition'), offset: parseOffset(str(value)),
    });
    ctx.out.message(`offset ${str(value)} stored for ${kind} '${str(consumer)}' on partition ${str(partition)}`, { stored: true, offset: parseOffset(str(value)) });
  });
}

// ── messages ───────────────────────────────────────────────────────────────────────────────────

async function readStdinLines(ctx: Context): Promise<string[]> {
  if (ctx.io.stdin.isTTY === true) throw new ShoalInvalidArgumentError('no messages given (pass them as arguments or pipe them on stdin, one per line)');
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l !== '');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function payloadText(payload: Uint8Array): { readonly text: string | null; readonly hex: string } {
  const hex = Buffer.from(payload).toString('hex');
  try {
    const text = strictUtf8.decode(payload);
    // eslint-disable-next-line no-control-regex
    return { text: /[\u0000-\u0008\u000e-\u001f]/.test(text) ? null : text, hex };
  } catch {
    return { text: null, hex };
  }
}

function headerText(value: HeaderValue): string {
  if (value.kind === 'raw' || value.kind === 'unknown') return `0x${Buffer.from(value.value).toString('hex')}`;
  return String(value.value);
}

function messageJson(m: ReceivedMessage): Record<string, unknown> {
  const p = payloadText(m.payload);
  return {
    partitionId: m.partitionId, offset: m.offset, timestamp: m.timestamp, originTimestamp: m.originTimestamp, id: m.id.toString(),
    checksum: m.checksum.toString(), payload: p.text, payloadHex: p.hex,
    headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, { kind: v.kind, value: v.kind === 'raw' || v.kind === 'unknown' ? Buffer.from(v.value).toString('hex') : v.value }])),
  };
}

function messageRow(m: ReceivedMessage, showHeaders: boolean): Record<string, unknown> {
  const p = payloadText(m.payload);
  const row: Record<string, unknown> = {
    offset: m.offset, timestamp: isoFromMicros(m.timestamp), id: m.id.toString(), size: m.payload.length, payload: p.text ?? `0x${p.hex}`,
  };
  if (showHeaders) row['headers'] = Object.entries(m.headers).map(([k, v]) => `${k}:${v.kind}:${headerText(v)}`).join(', ');
  return row;
}

interface PollFlags {
  readonly offset?: string;
  readonly first?: boolean;
  readonly last?: boolean;
  readonly next?: boolean;
  readonly messageCount: string;
  readonly autoCommit?: boolean;
  readonly consumer: string;
  readonly showHeaders?: boolean;
  readonly follow?: boolean;
  readonly limit?: string;
}

function pollStrategy(flags: PollFlags): PollingStrategyInput {
  const chosen = [flags.offset !== undefined, flags.first === true, flags.last === true, flags.next === true].filter(Boolean).length;
  if (chosen !== 1) throw new ShoalInvalidArgumentError('exactly one polling strategy is required: --offset <n>, --first, --last or --next');
  if (flags.offset !== undefined) return { offset: parseOffset(flags.offset) };
  return flags.first === true ? 'first' : flags.last === true ? 'last' : 'next';
}

function registerMessages(program: Command, leaf: Leaf): void {
  const message = program.command('message').alias('m').description('send and poll messages');
  leaf(message.command('send').alias('s').description('send messages (arguments, or stdin one per line)')
    .argument('<stream>').argument('<topic>').argument('[messages...]')
    .option('-p, --partition-id <id>', 'send to this partition')
    .option('-m, --message-key <key>', 'route by key: XXH32(key) mod partitions')
    .option('-H, --headers <key:kind:value,...>', 'message headers (repeatable)', collect), async (ctx, stream, topic, args, flags) => {
    const f = opt<{ partitionId?: string; messageKey?: string; headers?: string[] }>(flags);
    if (f.partitionId !== undefined && f.messageKey !== undefined) throw new ShoalInvalidArgumentError('--partition-id and --message-key are mutually exclusive');
    const texts = (args as string[]).length > 0 ? (args as string[]) : await readStdinLines(ctx);
    if (texts.length === 0) throw new ShoalInvalidArgumentError('no messages to send');
    const headers: [string, HeaderInput][] = parseHeaders(f.headers ?? []);
    const partitioning: ProducerPartitioning = f.partitionId !== undefined ? { partitionId: parseCount(f.partitionId, 'partition id') }
      : f.messageKey !== undefined ? { key: f.messageKey } : 'balanced';
    const producer = ctx.client().producer({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitioning, lingerMs: 0 });
    const results = [];
    for (let i = 0; i < texts.length; i += 1000) {
      const chunk: Message[] = texts.slice(i, i + 1000).map((payload) => (headers.length > 0 ? { payload, headers } : { payload }));
      results.push(await producer.send(chunk));
    }
    await producer.close();
    const first = results[0];
    ctx.out.message(`sent ${texts.length} message(s) to partition ${first?.partitionId ?? '-'} starting at offset ${first?.offset ?? '-'}`,
      { count: texts.length, batches: results.map((r) => ({ partitionId: r.partitionId, offset: r.offset, count: r.count })) });
  });

  leaf(message.command('poll').alias('p').description('poll messages from one partition')
    .argument('<stream>').argument('<topic>').argument('<partition>')
    .option('-o, --offset <offset>', 'start at this offset')
    .option('-f, --first', 'start at the first message')
    .option('-l, --last', 'the last messages')
    .option('-n, --next', 'continue after the stored consumer offset')
    .option('-m, --message-count <n>', 'messages per poll', '1')
    .option('-a, --auto-commit', 'store the offset on the server as part of the poll')
    .option('-c, --consumer <id>', 'consumer id or name', '0')
    .option('-s, --show-headers', 'include message headers')
    .option('-F, --follow', 'keep polling and print messages as they arrive (Ctrl-C stops)')
    .option('--limit <n>', 'with --follow: stop after this many messages'), async (ctx, stream, topic, partition, flags) => {
    const f = opt<PollFlags>(flags);
    const strategy = pollStrategy(f);
    const count = parseCount(f.messageCount, 'message count');
    const base = { streamId: parseId(str(stream)), topicId: parseId(str(topic)), consumer: parseId(f.consumer) };
    const partitionId = parseCount(str(partition), 'partition');
    if (f.follow !== true) {
      const polled = await ctx.client().pollMessages({ ...base, partitionId, strategy, count, autoCommit: f.autoCommit === true });
      if (ctx.out.json) {
        ctx.out.record({ partitionId: polled.partitionId, currentOffset: polled.currentOffset, count: polled.messages.length, messages: polled.messages.map(messageJson) });
        return;
      }
      ctx.out.message(`polled ${polled.messages.length} message(s) from partition ${polled.partitionId} (current offset ${polled.currentOffset})`);
      if (polled.messages.length > 0) ctx.out.table(polled.messages.map((m) => messageRow(m, f.showHeaders === true)));
      return;
    }
    const limit = f.limit === undefined ? Number.POSITIVE_INFINITY : parseCount(f.limit, 'limit');
    const stop = new AbortController();
    void ctx.io.interrupted.then(() => stop.abort());
    const consumer = ctx.client().consumer({
      streamId: base.streamId, topicId: base.topicId, consumer: base.consumer, partitionId, strategy, batchSize: Math.max(1, count),
      autoCommit: f.autoCommit === true ? 'server' : 'none', signal: stop.signal, pollIntervalMs: 100, pollIntervalMaxMs: 1000,
    });
    let seen = 0;
    for await (const m of consumer) {
      const row = messageRow(m, f.showHeaders === true);
      ctx.out.line(Object.entries(row).map(([k, v]) => `${k}=${String(v)}`).join(' '), messageJson(m));
      if (++seen >= limit) break;
    }
  });

  leaf(message.command('flush').alias('f').description('flush a partition (the server answers FeatureUnavailable: use enforce_fsync)')
    .argument('<stream>').argument('<topic>').argument('<partition>').option('--fsync', 'also fsync'), async (ctx, stream, topic, partition, flags) => {
    await ctx.client().flushUnsavedBuffer({ streamId: parseId(str(stream)), topicId: parseId(str(topic)), partitionId: parseCount(str(partition), 'partition'), fsync: opt<{ fsync?: boolean }>(flags).fsync === true });
    ctx.out.message('flushed', { flushed: true });
  });
}

/** How many partitions each node leads, as the answering node sees it (GetClusterMetadata extension). */
function partitionsLedByNode(view: ClusterView): Map<string, number> {
  const counts = new Map<string, number>();
  const groups = view.groups;
  if (groups === null) return counts;
  for (const topic of groups.topics) {
    for (const p of topic.partitions) {
      const index = groups.nodeReplicaIds.indexOf(p.primary);
      const node = index < 0 ? undefined : view.nodes[index];
      if (node !== undefined) counts.set(node.name, (counts.get(node.name) ?? 0) + 1);
    }
  }
  return counts;
}
