import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import type { Decoded } from '../../codec/decoded.js';
import { decodeExact, encodeWith, readBool, readNonZero } from '../../codec/body-codec.js';

/**
 * Permissions bytes (apache/iggy core/binary_protocol/src/primitives/permissions.rs, `WirePermissions`):
 *
 *   [10 x bool u8: global]  manage_servers read_servers manage_users read_users manage_streams
 *                           read_streams manage_topics read_topics poll_messages send_messages
 *   [has_streams: u8]
 *     per stream: [stream_id: u32][6 x bool: manage_stream read_stream manage_topics read_topics
 *                 poll_messages send_messages][has_topics: u8]
 *       per topic: [topic_id: u32][4 x bool: manage_topic read_topic poll_messages send_messages]
 *                  [has_next_topic: u8]
 *     [has_next_stream: u8]
 *
 * Chosen strictness: every bool and continuation flag must be 0 or 1 (the reference reads != 0), so
 * a decode → encode round trip is exact.
 */
export interface GlobalPermissions {
  readonly manageServers: boolean;
  readonly readServers: boolean;
  readonly manageUsers: boolean;
  readonly readUsers: boolean;
  readonly manageStreams: boolean;
  readonly readStreams: boolean;
  readonly manageTopics: boolean;
  readonly readTopics: boolean;
  readonly pollMessages: boolean;
  readonly sendMessages: boolean;
}

export interface TopicPermissions {
  readonly topicId: number;
  readonly manageTopic: boolean;
  readonly readTopic: boolean;
  readonly pollMessages: boolean;
  readonly sendMessages: boolean;
}

export interface StreamPermissions {
  readonly streamId: number;
  readonly manageStream: boolean;
  readonly readStream: boolean;
  readonly manageTopics: boolean;
  readonly readTopics: boolean;
  readonly pollMessages: boolean;
  readonly sendMessages: boolean;
  readonly topics: readonly TopicPermissions[];
}

export interface Permissions {
  readonly global: GlobalPermissions;
  readonly streams: readonly StreamPermissions[];
}

const GLOBAL_KEYS = [
  'manageServers', 'readServers', 'manageUsers', 'readUsers', 'manageStreams',
  'readStreams', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages',
] as const;
const STREAM_KEYS = ['manageStream', 'readStream', 'manageTopics', 'readTopics', 'pollMessages', 'sendMessages'] as const;
const TOPIC_KEYS = ['manageTopic', 'readTopic', 'pollMessages', 'sendMessages'] as const;

const flag = (b: boolean): number => (b ? 1 : 0);

export function writePermissions(w: ByteWriter, p: Permissions): void {
  for (const key of GLOBAL_KEYS) w.u8(flag(p.global[key]));
  w.u8(flag(p.streams.length > 0));
  p.streams.forEach((s, si) => {
    w.u32(s.streamId);
    for (const key of STREAM_KEYS) w.u8(flag(s[key]));
    w.u8(flag(s.topics.length > 0));
    s.topics.forEach((t, ti) => {
      w.u32(t.topicId);
      for (const key of TOPIC_KEYS) w.u8(flag(t[key]));
      w.u8(flag(ti < s.topics.length - 1));
    });
    w.u8(flag(si < p.streams.length - 1));
  });
}

/**
 * Strict by default (replies: every flag 0 or 1, so a decoded reply re-encodes exactly). Requests
 * pass `lenient`: every flag then reads as the reference's `read_bool`, any non-zero byte true
 * (primitives/permissions.rs).
 */
export function readPermissions(r: ByteReader, lenient = false): Permissions {
  const readFlag = lenient ? readNonZero : readBool;
  const g: Record<string, boolean> = {};
  for (const key of GLOBAL_KEYS) g[key] = readFlag(r, `permission_${key}`);
  const streams: StreamPermissions[] = [];
  let more = readFlag(r, 'has_streams');
  while (more && !r.failed) {
    const streamId = r.u32('permission_stream_id');
    const s: Record<string, boolean> = {};
    for (const key of STREAM_KEYS) s[key] = readFlag(r, `permission_${key}`);
    const topics: TopicPermissions[] = [];
    let moreTopics = readFlag(r, 'has_topics');
    while (moreTopics && !r.failed) {
      const topicId = r.u32('permission_topic_id');
      const t: Record<string, boolean> = {};
      for (const key of TOPIC_KEYS) t[key] = readFlag(r, `permission_${key}`);
      topics.push({
        topicId, manageTopic: t['manageTopic'] === true, readTopic: t['readTopic'] === true,
        pollMessages: t['pollMessages'] === true, sendMessages: t['sendMessages'] === true,
      });
      moreTopics = readFlag(r, 'has_next_topic');
    }
    streams.push({
      streamId, manageStream: s['manageStream'] === true, readStream: s['readStream'] === true,
      manageTopics: s['manageTopics'] === true, readTopics: s['readTopics'] === true,
      pollMessages: s['pollMessages'] === true, sendMessages: s['sendMessages'] === true, topics,
    });
    more = readFlag(r, 'has_next_stream');
  }
  return {
    global: {
      manageServers: g['manageServers'] === true, readServers: g['readServers'] === true,
      manageUsers: g['manageUsers'] === true, readUsers: g['readUsers'] === true,
      manageStreams: g['manageStreams'] === true, readStreams: g['readStreams'] === true,
      manageTopics: g['manageTopics'] === true, readTopics: g['readTopics'] === true,
      pollMessages: g['pollMessages'] === true, sendMessages: g['sendMessages'] === true,
    },
    streams,
  };
}

export function encodePermissions(p: Permissions): Uint8Array {
  return encodeWith((w) => writePermissions(w, p));
}

export function decodePermissions(bytes: Uint8Array, lenient = false): Decoded<Permissions> {
  return decodeExact(bytes, (r) => readPermissions(r, lenient));
}

/** `[permissions_len: u32][permissions]`, the form requests and user details use. */
export function writeLengthPrefixedPermissions(w: ByteWriter, p: Permissions): void {
  const bytes = encodePermissions(p);
  w.u32(bytes.length).bytes(bytes);
}

export function readLengthPrefixedPermissions(r: ByteReader, lenient = false): Permissions | null {
  const length = r.u32('permissions_length');
  const bytes = r.bytesView(length, 'permissions');
  if (r.failed) return null;
  const decoded = decodePermissions(bytes, lenient);
  if (!decoded.ok) {
    r.fail(decoded.reason);
    return null;
  }
  return decoded.value;
}
