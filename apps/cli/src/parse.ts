import { type HeaderInput, type Id, ShoalInvalidArgumentError } from '@shoal/client';
import { U64_MAX, parseExpiry, parseSizeLimit } from '@shoal/stdx';
import type { GlobalPermissions, HeaderValue, Permissions, StreamPermissions, TopicPermissions } from '@shoal/protocol';

/**
 * Argument parsing shared by the commands: ids (number or name), durations, sizes, headers,
 * permissions, `--set key=value`. Every failure is a ShoalInvalidArgumentError (exit code 1 with
 * the message).
 */

/** `7` → numeric id 7; anything else is a name (as the reference CLI: `dev` and `1` both work). */
export function parseId(text: string): Id {
  return /^\d+$/.test(text) ? Number(text) : text;
}

export function parseCount(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new ShoalInvalidArgumentError(`${what} must be a non-negative integer (got '${text}')`);
  return Number(text);
}

export function parseOffset(text: string): bigint {
  if (!/^\d+$/.test(text)) throw new ShoalInvalidArgumentError(`offset must be a non-negative integer (got '${text}')`);
  return BigInt(text);
}

/**
 * A message expiry / token expiry (the one syntax of @shoal/stdx units.ts): a duration (`7d`,
 * `1day 12h`, `90s`), `unlimited` / `none` / `never` / `never_expire` (never: u64::MAX on the
 * wire, as the reference's IggyExpiry::NeverExpire), or `server_default` / nothing (undefined:
 * leave it to the server). Returns microseconds.
 */
export function parseExpiryMicros(words: readonly string[]): bigint | undefined {
  const text = words.join(' ').trim();
  if (text === '') return undefined;
  const parsed = parseExpiry(text);
  if (!parsed.ok) throw new ShoalInvalidArgumentError(`'${text}' is not an expiry (e.g. 7d, 1day 12h, 90s, unlimited): ${parsed.reason}`);
  switch (parsed.value.kind) {
    case 'server_default': return undefined;
    case 'never': return U64_MAX;
    case 'after': return parsed.value.ns / 1000n;
  }
}

/** A size limit: `15GB`, `128MiB`, `1000`, `unlimited` (u64::MAX), `server_default` (undefined). */
export function parseSize(text: string): bigint | undefined {
  const parsed = parseSizeLimit(text);
  if (!parsed.ok) throw new ShoalInvalidArgumentError(`'${text}' is not a size (e.g. 15GB, 128MiB, unlimited): ${parsed.reason}`);
  switch (parsed.value.kind) {
    case 'server_default': return undefined;
    case 'unlimited': return U64_MAX;
    case 'bytes': return parsed.value.bytes;
  }
}

/** `key=value` (repeatable `--set`). */
export function parseSet(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) throw new ShoalInvalidArgumentError(`--set expects key=value (got '${pair}')`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

const INT_KINDS = ['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'] as const;
const BIG_KINDS = ['int64', 'int128', 'uint64', 'uint128'] as const;

/** `key:kind:value[,key:kind:value…]`; kinds raw (hex with 0x, else UTF-8), string, bool, intN, uintN, float32, float64. */
export function parseHeaders(specs: readonly string[]): [string, HeaderInput][] {
  const out: [string, HeaderInput][] = [];
  for (const spec of specs.flatMap((s) => s.split(','))) {
    if (spec.trim() === '') continue;
    const first = spec.indexOf(':');
    const second = spec.indexOf(':', first + 1);
    if (first <= 0 || second < 0) throw new ShoalInvalidArgumentError(`header '${spec}' must be key:kind:value`);
    const key = spec.slice(0, first);
    const kind = spec.slice(first + 1, second).toLowerCase();
    const text = spec.slice(second + 1);
    out.push([key, headerValue(kind, text, spec)]);
  }
  return out;
}

function headerValue(kind: string, text: string, spec: string): HeaderValue {
  const bad = (): ShoalInvalidArgumentError => new ShoalInvalidArgumentError(`header '${spec}': '${text}' is not a valid ${kind}`);
  if (kind === 'string') return { kind: 'string', value: text };
  if (kind === 'raw') return { kind: 'raw', value: text.startsWith('0x') ? Buffer.from(text.slice(2), 'hex') : Buffer.from(text, 'utf8') };
  if (kind === 'bool') {
    if (text !== 'true' && text !== 'false') throw bad();
    return { kind: 'bool', value: text === 'true' };
  }
  if (kind === 'float32' || kind === 'float64') {
    const value = Number(text);
    if (text.trim() === '' || Number.isNaN(value)) throw bad();
    return { kind, value };
  }
  if ((INT_KINDS as readonly string[]).includes(kind)) {
    if (!/^-?\d+$/.test(text)) throw bad();
    return { kind: kind as (typeof INT_KINDS)[number], value: Number(text) };
  }
  if ((BIG_KINDS as readonly string[]).includes(kind)) {
    if (!/^-?\d+$/.test(text)) throw bad();
    return { kind: kind as (typeof BIG_KINDS)[number], value: BigInt(text) };
  }
  throw new ShoalInvalidArgumentError(`header '${spec}': unknown kind '${kind}'`);
}

const GLOBAL_TOKENS: Readonly<Record<string, keyof GlobalPermissions>> = {
  manage_servers: 'manageServers', m_srv: 'manageServers', read_servers: 'readServers', r_srv: 'readServers',
  manage_users: 'manageUsers', m_usr: 'manageUsers', read_users: 'readUsers', r_usr: 'readUsers',
  manage_streams: 'manageStreams', m_str: 'manageStreams', read_streams: 'readStreams', r_str: 'readStreams',
  manage_topics: 'manageTopics', m_top: 'manageTopics', read_topics: 'readTopics', r_top: 'readTopics',
  poll_messages: 'pollMessages', p_msg: 'pollMessages', send_messages: 'sendMessages', s_msg: 'sendMessages',
};

type StreamFlag = Exclude<keyof StreamPermissions, 'streamId' | 'topics'>;
type TopicFlag = Exclude<keyof TopicPermissions, 'topicId'>;

const STREAM_TOKENS: Readonly<Record<string, StreamFlag>> = {
  manage_stream: 'manageStream', m_str: 'manageStream', read_stream: 'readStream', r_str: 'readStream',
  manage_topics: 'manageTopics', m_top: 'manageTopics', read_topics: 'readTopics', r_top: 'readTopics',
  poll_messages: 'pollMessages', p_msg: 'pollMessages', send_messages: 'sendMessages', s_msg: 'sendMessages',
};

const TOPIC_TOKENS: Readonly<Record<string, TopicFlag>> = {
  manage_topic: 'manageTopic', m_top: 'manageTopic', read_topic: 'readTopic', r_top: 'readTopic',
  poll_messages: 'pollMessages', p_msg: 'pollMessages', send_messages: 'sendMessages', s_msg: 'sendMessages',
};

function tokens(list: string): string[] {
  return list.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/**
 * `-g p_msg,s_msg` and `-s STREAM_ID[:PERMS][#TOPIC_ID[:PERMS]]…` (repeatable); null when no flag
 * is given (no permissions).
 */
export function parsePermissions(global: string | undefined, streams: readonly string[]): Permissions | null {
  if (global === undefined && streams.length === 0) return null;
  const g: Record<keyof GlobalPermissions, boolean> = {
    manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false,
    readStreams: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false,
  };
  for (const token of tokens(global ?? '')) {
    const key = GLOBAL_TOKENS[token];
    if (key === undefined) throw new ShoalInvalidArgumentError(`unknown global permission '${token}'`);
    g[key] = true;
  }
  return { global: g, streams: streams.map(parseStreamPermissions) };
}

function parseStreamPermissions(spec: string): StreamPermissions {
  const [head, ...topicSpecs] = spec.split('#');
  const [idText, list] = (head ?? '').split(':');
  if (idText === undefined || !/^\d+$/.test(idText)) throw new ShoalInvalidArgumentError(`stream permissions '${spec}': expected STREAM_ID[:PERMS][#TOPIC_ID[:PERMS]]`);
  const s: Record<StreamFlag, boolean> = { manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false };
  for (const token of tokens(list ?? '')) {
    const key = STREAM_TOKENS[token];
    if (key === undefined) throw new ShoalInvalidArgumentError(`unknown stream permission '${token}'`);
    s[key] = true;
  }
  const topics = topicSpecs.map((topicSpec): TopicPermissions => {
    const [topicId, topicList] = topicSpec.split(':');
    if (topicId === undefined || !/^\d+$/.test(topicId)) throw new ShoalInvalidArgumentError(`topic permissions '${topicSpec}': expected TOPIC_ID[:PERMS]`);
    const t: Record<TopicFlag, boolean> = { manageTopic: false, readTopic: false, pollMessages: false, sendMessages: false };
    for (const token of tokens(topicList ?? '')) {
      const key = TOPIC_TOKENS[token];
      if (key === undefined) throw new ShoalInvalidArgumentError(`unknown topic permission '${token}'`);
      t[key] = true;
    }
    return { topicId: Number(topicId), ...t };
  });
  return { streamId: Number(idText), ...s, topics };
}
