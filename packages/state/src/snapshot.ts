import {
  type Decoded, type GlobalPermissions, type Permissions, SHOAL_PROTOCOL_VERSION, type StreamPermissions, type TopicPermissions,
  fail, headerKindName, ok,
} from '@shoal/protocol';
import { IdTable } from './id-table.js';
import { MetadataState, type MetadataStateOptions } from './metadata-state.js';
import {
  type ConsumerGroup, type GroupMember, type MetadataModel, type OptionMap, type PartitionRecord, type PersonalAccessToken,
  type StoredOption, type Stream, type Topic, type User, emptyModel, sortedOptions,
} from './model.js';
import { type SnapshotValue, WideUint, fromU128, packValue, u128, u64, unpackValue } from './msgpack.js';
import { groupsInOrder } from './lookup.js';

/**
 * snapshot.bin payload, format version 3 (replication-semantics.md §9.3): MessagePack positional
 * arrays in the rmp-serde conventions (msgpack.ts). Storage owns the file (trailer, fsync); this is
 * the payload. Every collection is emitted in ascending id / key order, so two replicas with the
 * same committed history write byte-identical snapshots.
 *
 *   [3, created_at, sequence_number, users, streams, client_table, writer_release]
 *   users   = [items, personal_access_tokens, permissioner]
 *   streams = [items, revision]
 *
 * Deliberate content choices: stream/topic stats are written as [0, 0, 0] (the live counters
 * belong to the partition plane and differ per replica; reads ask the host for them); the
 * permissioner lists are derived from the users' permissions on write and ignored on read; the
 * client table is the consensus core's checkpoint form, carried opaquely.
 */
export const SNAPSHOT_FORMAT_VERSION = 3;

export interface EncodeSnapshotInput {
  readonly sequenceNumber: bigint;
  /** µs, from the consensus clock. */
  readonly createdAt: bigint;
  /** The consensus core's client-table checkpoint form (plain data), or null. */
  readonly clientTable: SnapshotValue;
}

export interface RestoredSnapshot {
  readonly state: MetadataState;
  readonly sequenceNumber: bigint;
  readonly createdAt: bigint;
  readonly clientTable: SnapshotValue;
  readonly writerRelease: number;
}

export function encodeSnapshot(state: MetadataState, input: EncodeSnapshotInput): Uint8Array {
  const m = state.model;
  return packValue([
    SNAPSHOT_FORMAT_VERSION,
    u64(input.createdAt),
    u64(input.sequenceNumber),
    [usersItems(m), tokensSection(m), permissioner(m)],
    [streamsItems(m), u64(m.revision)],
    input.clientTable,
    SHOAL_PROTOCOL_VERSION,
  ]);
}

// ---- writing -------------------------------------------------------------------------------

const bool = (b: boolean): boolean => b;

function globalBools(g: GlobalPermissions): boolean[] {
  return [g.manageServers, g.readServers, g.manageUsers, g.readUsers, g.manageStreams, g.readStreams, g.manageTopics, g.readTopics, g.pollMessages, g.sendMessages].map(bool);
}

function topicBools(t: TopicPermissions): SnapshotValue {
  return [t.manageTopic, t.readTopic, t.pollMessages, t.sendMessages];
}

function streamBools(s: StreamPermissions): SnapshotValue {
  const topics = s.topics.length === 0 ? null : new Map<SnapshotValue, SnapshotValue>(s.topics.map((t) => [t.topicId, topicBools(t)]));
  return [s.manageStream, s.readStream, s.manageTopics, s.readTopics, s.pollMessages, s.sendMessages, topics];
}

function permissionsValue(p: Permissions | null): SnapshotValue {
  if (p === null) return null;
  const streams = p.streams.length === 0 ? null : new Map<SnapshotValue, SnapshotValue>(p.streams.map((s) => [s.streamId, streamBools(s)]));
  return [globalBools(p.global), streams];
}

function optionsValue(options: OptionMap): SnapshotValue {
  const map = new Map<SnapshotValue, SnapshotValue>();
  for (const o of sortedOptions(options)) {
    const kindName = kindSnake(o.kind);
    map.set(['string', toBase64(new TextEncoder().encode(o.key))], [[kindName, toBase64(o.value)], o.explicit]);
  }
  return map;
}

function kindSnake(kind: number): string {
  return (headerKindName(kind) ?? `kind_${kind}`).toLowerCase();
}

function usersItems(m: MetadataModel): SnapshotValue {
  return [...m.users.entries()].map(([id, u]) => [id, [
    id, u.username, u.passwordHash, u.status === 1 ? 'active' : 'inactive', u64(u.createdAt), permissionsValue(u.permissions), optionsValue(u.options),
  ]]);
}

function tokensSection(m: MetadataModel): SnapshotValue {
  const out: SnapshotValue[] = [];
  for (const [id, u] of m.users.entries()) {
    if (u.tokens.size === 0) continue;
    const tokens = [...u.tokens.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((t) => [t.name, [id, t.name, t.tokenHash, t.expiryAt === null ? null : u64(t.expiryAt)]]);
    out.push([id, tokens]);
  }
  return out;
}

function permissioner(m: MetadataModel): SnapshotValue {
  const global: SnapshotValue[] = [];
  const streams: SnapshotValue[] = [];
  const pollAll: number[] = [];
  const sendAll: number[] = [];
  const pollSome: SnapshotValue[] = [];
  const sendSome: SnapshotValue[] = [];
  for (const [id, u] of m.users.entries()) {
    const p = u.permissions;
    if (p === null) continue;
    global.push([id, globalBools(p.global)]);
    if (p.global.pollMessages) pollAll.push(id);
    if (p.global.sendMessages) sendAll.push(id);
    for (const s of p.streams) {
      streams.push([[id, s.streamId], streamBools(s)]);
      if (s.pollMessages) pollSome.push([id, s.streamId]);
      if (s.sendMessages) sendSome.push([id, s.streamId]);
    }
  }
  return [global, streams, pollAll, sendAll, pollSome, sendSome];
}

const ZERO_STATS: SnapshotValue = [0, 0, 0];

function streamsItems(m: MetadataModel): SnapshotValue {
  return [...m.streams.entries()].map(([id, s]) => [id, [
    id, s.name, u64(s.createdAt), ZERO_STATS, [...s.topics.entries()].map(([tid, t]) => [tid, topicValue(t)]), optionsValue(s.options),
  ]]);
}

function topicValue(t: Topic): SnapshotValue {
  const partitions = t.partitions.map((p) => [
    p.id, u64(p.consensusGroupId), u64(p.createdAt), u64(p.createdRevision), u64(p.deletedUpToOffset), u64(p.purgeGeneration),
  ]);
  const groups = groupsInOrder(t).map((g) => [g.id, [g.id, u64(g.generation), g.name, [...g.members.entries()].map(([mid, mem]) => [mid, [
    mem.id, u128(mem.clientId), [...mem.partitions], mem.pendingRevocations.map((r) => [r.partitionId, r.targetMember, u64(r.createdAt)]),
  ]])]]);
  return [
    t.id, t.name, u64(t.createdAt), u64(t.messageExpiry), t.compression, u64(t.maxTopicSize), ZERO_STATS, partitions, groups,
    t.nextConsumerGroupId, optionsValue(t.options),
  ];
}

// ---- reading -------------------------------------------------------------------------------

/** Thrown only inside this module and turned into a reason by `restoreSnapshot`. */
class Malformed extends Error {}

function bad(what: string): never {
  throw new Malformed(what);
}

function arr(v: unknown, what: string, length?: number): unknown[] {
  if (!Array.isArray(v)) bad(`${what}_not_array`);
  if (length !== undefined && v.length !== length) bad(`${what}_length`);
  return v;
}

function big(v: unknown, what: string): bigint {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'bigint' && v >= 0n && v <= 0xffff_ffff_ffff_ffffn) return v;
  return bad(`${what}_not_u64`);
}

function num(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff) return v;
  return bad(`${what}_not_u32`);
}

function str(v: unknown, what: string): string {
  return typeof v === 'string' ? v : bad(`${what}_not_string`);
}

function flag(v: unknown, what: string): boolean {
  return typeof v === 'boolean' ? v : bad(`${what}_not_bool`);
}

function bin(v: unknown, what: string, length?: number): Uint8Array {
  if (!(v instanceof Uint8Array)) bad(`${what}_not_bin`);
  if (length !== undefined && v.length !== length) bad(`${what}_length`);
  return v;
}

function mapOf(v: unknown, what: string): Map<unknown, unknown> {
  return v instanceof Map ? v : bad(`${what}_not_map`);
}

export function restoreSnapshot(bytes: Uint8Array, options: MetadataStateOptions = {}): Decoded<RestoredSnapshot> {
  let root: unknown;
  try {
    root = unpackValue(bytes);
  } catch {
    return fail('snapshot_not_msgpack');
  }
  if (!Array.isArray(root) || root.length === 0) return fail('snapshot_not_array');
  if (root[0] !== SNAPSHOT_FORMAT_VERSION) return fail('snapshot_version_unsupported');
  try {
    const top = arr(root, 'snapshot', 7);
    const model = emptyModel();
    if (top[3] !== null) readUsers(model, arr(top[3], 'users', 3));
    if (top[4] !== null) readStreams(model, arr(top[4], 'streams', 2));
    const state = new MetadataState(options, model);
    const sequenceNumber = big(top[2], 'sequence_number');
    state.setLastAppliedOp(sequenceNumber);
    return ok({ state, sequenceNumber, createdAt: big(top[1], 'created_at'), clientTable: top[5] as SnapshotValue, writerRelease: num(top[6], 'writer_release') });
  } catch (e) {
    if (e instanceof Malformed) return fail(`snapshot_${e.message}`);
    throw e;
  }
}

function readGlobal(v: unknown): GlobalPermissions {
  const b = arr(v, 'global_permissions', 10).map((x) => flag(x, 'permission'));
  return {
    manageServers: b[0] === true, readServers: b[1] === true, manageUsers: b[2] === true, readUsers: b[3] === true,
    manageStreams: b[4] === true, readStreams: b[5] === true, manageTopics: b[6] === true, readTopics: b[7] === true,
    pollMessages: b[8] === true, sendMessages: b[9] === true,
  };
}

function readPermissions(v: unknown): Permissions | null {
  if (v === null) return null;
  const [g, s] = arr(v, 'permissions', 2);
  const streams: StreamPermissions[] = [];
  if (s !== null) {
    for (const [sid, sv] of mapOf(s, 'stream_permissions')) {
      const f = arr(sv, 'stream_permission', 7);
      const topics: TopicPermissions[] = [];
      if (f[6] !== null) {
        for (const [tid, tv] of mapOf(f[6], 'topic_permissions')) {
          const t = arr(tv, 'topic_permission', 4).map((x) => flag(x, 'permission'));
          topics.push({ topicId: num(tid, 'topic_id'), manageTopic: t[0] === true, readTopic: t[1] === true, pollMessages: t[2] === true, sendMessages: t[3] === true });
        }
      }
      const b = f.slice(0, 6).map((x) => flag(x, 'permission'));
      streams.push({
        streamId: num(sid, 'stream_id'), manageStream: b[0] === true, readStream: b[1] === true, manageTopics: b[2] === true,
        readTopics: b[3] === true, pollMessages: b[4] === true, sendMessages: b[5] === true, topics: topics.sort((a, c) => a.topicId - c.topicId),
      });
    }
  }
  return { global: readGlobal(g), streams: streams.sort((a, c) => a.streamId - c.streamId) };
}

const KIND_BY_NAME: ReadonlyMap<string, number> = new Map(
  Array.from({ length: 15 }, (_, i) => [(headerKindName(i + 1) ?? '').toLowerCase(), i + 1] as [string, number]),
);

function readOptions(v: unknown): OptionMap {
  const out: OptionMap = new Map();
  for (const [k, val] of mapOf(v, 'options')) {
    const [keyKind, keyB64] = arr(k, 'option_key', 2);
    if (str(keyKind, 'option_key_kind') !== 'string') bad('option_key_kind');
    const key = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(str(keyB64, 'option_key')));
    const [field, explicit] = arr(val, 'option_value', 2);
    const [kindName, valueB64] = arr(field, 'option_field', 2);
    const kind = KIND_BY_NAME.get(str(kindName, 'option_kind'));
    if (kind === undefined) bad('option_kind');
    const stored: StoredOption = { key, kind, value: fromBase64(str(valueB64, 'option_value')), explicit: flag(explicit, 'option_explicit') };
    out.set(key, stored);
  }
  return out;
}

function readUsers(model: MetadataModel, section: unknown[]): void {
  for (const item of arr(section[0], 'user_items')) {
    const [slab, uv] = arr(item, 'user_item', 2);
    const f = arr(uv, 'user', 7);
    const id = num(f[0], 'user_id');
    if (num(slab, 'user_slab') !== id || model.users.has(id)) bad('user_id');
    const status = str(f[3], 'user_status');
    if (status !== 'active' && status !== 'inactive') bad('user_status');
    const user: User = {
      id, username: str(f[1], 'username'), passwordHash: str(f[2], 'password_hash'), status: status === 'active' ? 1 : 2,
      createdAt: big(f[4], 'user_created_at'), permissions: readPermissions(f[5]), options: readOptions(f[6]), tokens: new Map(),
    };
    model.users.insert(id, user);
    model.userIndex.set(user.username, id);
  }
  for (const entry of arr(section[1], 'personal_access_tokens')) {
    const [uid, list] = arr(entry, 'user_tokens', 2);
    const user = model.users.get(num(uid, 'token_user_id')) ?? bad('token_user_unknown');
    for (const pair of arr(list, 'token_list')) {
      const [name, tv] = arr(pair, 'token_pair', 2);
      const t = arr(tv, 'token', 4);
      const token: PersonalAccessToken = {
        userId: user.id, name: str(name, 'token_name'), tokenHash: str(t[2], 'token_hash'), expiryAt: t[3] === null ? null : big(t[3], 'token_expiry'),
      };
      if (str(t[1], 'token_name') !== token.name || num(t[0], 'token_user') !== user.id) bad('token_inconsistent');
      user.tokens.set(token.name, token);
      model.tokenIndex.set(token.tokenHash, { userId: user.id, name: token.name });
    }
  }
  arr(section[2], 'permissioner', 6);
}

function readStreams(model: MetadataModel, section: unknown[]): void {
  for (const item of arr(section[0], 'stream_items')) {
    const [slab, sv] = arr(item, 'stream_item', 2);
    const f = arr(sv, 'stream', 6);
    const id = num(f[0], 'stream_id');
    if (num(slab, 'stream_slab') !== id || model.streams.has(id)) bad('stream_id');
    arr(f[3], 'stream_stats', 3);
    const stream: Stream = {
      id, name: str(f[1], 'stream_name'), createdAt: big(f[2], 'stream_created_at'), options: readOptions(f[5]),
      topics: new IdTable<Topic>(), topicIndex: new Map(),
    };
    for (const titem of arr(f[4], 'topic_items')) {
      const [tslab, tv] = arr(titem, 'topic_item', 2);
      const topic = readTopic(tv);
      if (num(tslab, 'topic_slab') !== topic.id || stream.topics.has(topic.id)) bad('topic_id');
      stream.topics.insert(topic.id, topic);
      stream.topicIndex.set(topic.name, topic.id);
    }
    model.streams.insert(id, stream);
    model.streamIndex.set(stream.name, id);
  }
  model.revision = big(section[1], 'revision');
}

function readTopic(v: unknown): Topic {
  const f = arr(v, 'topic', 11);
  const compression = str(f[4], 'compression');
  if (compression !== 'none' && compression !== 'gzip') bad('compression');
  arr(f[6], 'topic_stats', 3);
  const partitions: PartitionRecord[] = arr(f[7], 'partitions').map((pv) => {
    const p = arr(pv, 'partition', 6);
    return {
      id: num(p[0], 'partition_id'), consensusGroupId: big(p[1], 'consensus_group_id'), createdAt: big(p[2], 'partition_created_at'),
      createdRevision: big(p[3], 'created_revision'), deletedUpToOffset: big(p[4], 'deleted_up_to_offset'), purgeGeneration: big(p[5], 'purge_generation'),
    };
  });
  partitions.forEach((p, i) => (p.id === i ? undefined : bad('partition_ids_not_contiguous')));
  const topic: Topic = {
    id: num(f[0], 'topic_id'), name: str(f[1], 'topic_name'), createdAt: big(f[2], 'topic_created_at'), messageExpiry: big(f[3], 'message_expiry'),
    compression, maxTopicSize: big(f[5], 'max_topic_size'), options: readOptions(f[10]), partitions,
    consumerGroups: new Map(), groupIndex: new Map(), nextConsumerGroupId: num(f[9], 'next_consumer_group_id'),
  };
  for (const gitem of arr(f[8], 'consumer_groups')) {
    const [gid, gv] = arr(gitem, 'consumer_group_item', 2);
    const g = arr(gv, 'consumer_group', 4);
    const members = new IdTable<GroupMember>();
    for (const mitem of arr(g[3], 'members')) {
      const [mslab, mv] = arr(mitem, 'member_item', 2);
      const mf = arr(mv, 'member', 4);
      const mid = num(mf[0], 'member_id');
      if (num(mslab, 'member_slab') !== mid || members.has(mid)) bad('member_id');
      members.insert(mid, {
        id: mid, clientId: fromU128(bin(mf[1], 'member_client', 16)), partitions: arr(mf[2], 'member_partitions').map((x) => num(x, 'member_partition')),
        pendingRevocations: arr(mf[3], 'pending_revocations').map((rv) => {
          const r = arr(rv, 'pending_revocation', 3);
          return { partitionId: num(r[0], 'revocation_partition'), targetMember: num(r[1], 'revocation_target'), createdAt: big(r[2], 'revocation_created_at') };
        }),
      });
    }
    const group: ConsumerGroup = { id: num(g[0], 'group_id'), generation: big(g[1], 'generation'), name: str(g[2], 'group_name'), members };
    if (num(gid, 'group_key') !== group.id || topic.consumerGroups.has(group.id)) bad('group_id');
    topic.consumerGroups.set(group.id, group);
    topic.groupIndex.set(group.name, group.id);
    if (group.id >= topic.nextConsumerGroupId) topic.nextConsumerGroupId = group.id + 1;
  }
  return topic;
}

// ---- base64 (serde_with's standard alphabet, padded) --------------------------------------

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i] as number;
    const b = i + 1 < bytes.length ? (bytes[i + 1] as number) : 0;
    const c = i + 2 < bytes.length ? (bytes[i + 2] as number) : 0;
    const n = (a << 16) | (b << 8) | c;
    out += ALPHABET[(n >> 18) & 63];
    out += ALPHABET[(n >> 12) & 63];
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63] : '=';
  }
  return out;
}

export function fromBase64(text: string): Uint8Array {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) bad('base64');
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const ch = text[i + j] as string;
      n = (n << 6) | (ch === '=' ? 0 : ALPHABET.indexOf(ch));
    }
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}

export { WideUint };
export type { SnapshotValue };
