import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readName, writeName } from '../encodings/name.js';
import { type OptionEntry, readPrefixedOptions, writePrefixedOptions } from '../encodings/options-block.js';
import type { BodyParts } from './command-codec.js';

/**
 * Stream, topic and partition records of the read responses. Layouts from apache/iggy
 * core/binary_protocol/src/responses/** (see docs/wire-client-commands.md):
 *
 *   StreamResponse  [id:u32][created_at:u64][topics_count:u32][size_bytes:u64][messages_count:u64]
 *                   [name:Name][options_len:u32][options TLV]            (streams/get_stream.rs users;
 *                   field order pinned by client_frames.json reply vectors)
 *   TopicHeader     [id:u32][created_at:u64][partitions_count:u32][message_expiry:u64]
 *                   [compression_algorithm:u8][max_topic_size:u64][size_bytes:u64][messages_count:u64]
 *                   [name:Name][options_len:u32][options][derived_len:u32][derived options]
 *                                                                         (streams/get_stream.rs)
 *   Partition       [id:u32][created_at:u64][segments_count:u32][current_offset:u64][size_bytes:u64]
 *                   [messages_count:u64]   40 bytes        (topics/get_topic.rs at bacef3c; the later
 *                   64-byte record with a PartitionContext belongs to a newer protocol)
 *
 *   GetStream / CreateStream  [StreamResponse][TopicHeader x topics_count]
 *   GetStreams                [StreamResponse]* to the end of the payload
 *   GetTopic / CreateTopic    [TopicHeader][Partition x partitions_count]
 *   GetTopics                 [topics_count:u32][TopicHeader x count]
 * Timestamps are microseconds since the epoch.
 */
export interface StreamInfo {
  readonly id: number;
  readonly createdAt: bigint;
  readonly topicsCount: number;
  readonly sizeBytes: bigint;
  readonly messagesCount: bigint;
  readonly name: string;
  readonly options: readonly OptionEntry[];
}

export interface TopicInfo {
  readonly id: number;
  readonly createdAt: bigint;
  readonly partitionsCount: number;
  /** µs; 0 = never. */
  readonly messageExpiry: bigint;
  /** 1 none, 2 gzip. */
  readonly compressionAlgorithm: number;
  /** bytes; 0 = unlimited / server default. */
  readonly maxTopicSize: bigint;
  readonly sizeBytes: bigint;
  readonly messagesCount: bigint;
  readonly name: string;
  /** Keys the client pinned at create. */
  readonly options: readonly OptionEntry[];
  /** Defaults the admitting primary resolved. */
  readonly derivedOptions: readonly OptionEntry[];
}

export interface PartitionInfo {
  readonly id: number;
  readonly createdAt: bigint;
  readonly segmentsCount: number;
  readonly currentOffset: bigint;
  readonly sizeBytes: bigint;
  readonly messagesCount: bigint;
}

/** topicsCount === topics.length. */
export interface StreamDetails extends StreamInfo {
  readonly topics: readonly TopicInfo[];
}

/** partitionsCount === partitions.length. */
export interface TopicDetails extends TopicInfo {
  readonly partitions: readonly PartitionInfo[];
}

export const PARTITION_RECORD_SIZE = 40;
/** Smallest TopicHeader: 50 fixed bytes + a 1-byte name + two empty prefixed blocks. */
export const TOPIC_HEADER_MIN_SIZE = 50 + 1 + 8;

export function writeStreamInfo(w: ByteWriter, s: StreamInfo): void {
  w.u32(s.id).u64(s.createdAt).u32(s.topicsCount).u64(s.sizeBytes).u64(s.messagesCount);
  writeName(w, s.name);
  writePrefixedOptions(w, s.options);
}

export function readStreamInfo(r: ByteReader): StreamInfo {
  const id = r.u32('stream_id');
  const createdAt = r.u64('created_at');
  const topicsCount = r.u32('topics_count');
  const sizeBytes = r.u64('size_bytes');
  const messagesCount = r.u64('messages_count');
  const name = readName(r, 'stream_name');
  const options = readPrefixedOptions(r, 'stream_options');
  return { id, createdAt, topicsCount, sizeBytes, messagesCount, name, options };
}

export function writeTopicInfo(w: ByteWriter, t: TopicInfo): void {
  w.u32(t.id).u64(t.createdAt).u32(t.partitionsCount).u64(t.messageExpiry).u8(t.compressionAlgorithm)
    .u64(t.maxTopicSize).u64(t.sizeBytes).u64(t.messagesCount);
  writeName(w, t.name);
  writePrefixedOptions(w, t.options);
  writePrefixedOptions(w, t.derivedOptions);
}

export function readTopicInfo(r: ByteReader): TopicInfo {
  const id = r.u32('topic_id');
  const createdAt = r.u64('created_at');
  const partitionsCount = r.u32('partitions_count');
  const messageExpiry = r.u64('message_expiry');
  const compressionAlgorithm = r.u8('compression_algorithm');
  const maxTopicSize = r.u64('max_topic_size');
  const sizeBytes = r.u64('size_bytes');
  const messagesCount = r.u64('messages_count');
  const name = readName(r, 'topic_name');
  const options = readPrefixedOptions(r, 'topic_options');
  const derivedOptions = readPrefixedOptions(r, 'topic_derived_options');
  return { id, createdAt, partitionsCount, messageExpiry, compressionAlgorithm, maxTopicSize, sizeBytes, messagesCount, name, options, derivedOptions };
}

export function writePartitionInfo(w: ByteWriter, p: PartitionInfo): void {
  w.u32(p.id).u64(p.createdAt).u32(p.segmentsCount).u64(p.currentOffset).u64(p.sizeBytes).u64(p.messagesCount);
}

export function readPartitionInfo(r: ByteReader): PartitionInfo {
  return {
    id: r.u32('partition_id'),
    createdAt: r.u64('created_at'),
    segmentsCount: r.u32('segments_count'),
    currentOffset: r.u64('current_offset'),
    sizeBytes: r.u64('size_bytes'),
    messagesCount: r.u64('messages_count'),
  };
}

export const STREAM_DETAILS: BodyParts<StreamDetails> = {
  write: (w, s) => {
    assert(s.topics.length === s.topicsCount, 'StreamDetails: topicsCount must equal topics.length');
    writeStreamInfo(w, s);
    for (const t of s.topics) writeTopicInfo(w, t);
  },
  read: (r) => {
    const stream = readStreamInfo(r);
    const topics: TopicInfo[] = [];
    if (checkCount(r, stream.topicsCount, TOPIC_HEADER_MIN_SIZE, 'topics')) {
      for (let i = 0; i < stream.topicsCount && !r.failed; i++) topics.push(readTopicInfo(r));
    }
    return { ...stream, topics };
  },
};

export const STREAM_INFO: BodyParts<StreamInfo> = { write: writeStreamInfo, read: readStreamInfo };

export const TOPIC_DETAILS: BodyParts<TopicDetails> = {
  write: (w, t) => {
    assert(t.partitions.length === t.partitionsCount, 'TopicDetails: partitionsCount must equal partitions.length');
    writeTopicInfo(w, t);
    for (const p of t.partitions) writePartitionInfo(w, p);
  },
  read: (r) => {
    const topic = readTopicInfo(r);
    const partitions: PartitionInfo[] = [];
    if (checkCount(r, topic.partitionsCount, PARTITION_RECORD_SIZE, 'partitions')) {
      for (let i = 0; i < topic.partitionsCount && !r.failed; i++) partitions.push(readPartitionInfo(r));
    }
    return { ...topic, partitions };
  },
};

export const TOPIC_LIST: BodyParts<TopicInfo[]> = {
  write: (w, topics) => {
    w.u32(topics.length);
    for (const t of topics) writeTopicInfo(w, t);
  },
  read: (r) => {
    const count = r.u32('topics_count');
    const topics: TopicInfo[] = [];
    if (checkCount(r, count, TOPIC_HEADER_MIN_SIZE, 'topics')) {
      for (let i = 0; i < count && !r.failed; i++) topics.push(readTopicInfo(r));
    }
    return topics;
  },
};
