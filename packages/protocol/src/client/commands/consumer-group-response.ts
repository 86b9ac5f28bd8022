import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readName, writeName } from '../encodings/name.js';
import type { BodyParts } from './command-codec.js';

/**
 * Consumer group records (apache/iggy core/binary_protocol/src/responses/consumer_groups/
 * consumer_group_response.rs and the details response beside it; SyncConsumerGroup from
 * foreign/node/src/wire/consumer-group/sync-group.command.ts):
 *
 *   ConsumerGroupResponse  [id:u32][partitions_count:u32][members_count:u32][name:Name]
 *   Member                 [id:u32][partitions_count:u32][partition_id:u32 x count]
 *   GetConsumerGroup       [ConsumerGroupResponse][Member x members_count]
 *   GetConsumerGroups      [ConsumerGroupResponse]* to the end (pre-VSR mapper; no list type found)
 *   SyncConsumerGroup      [generation:u64][partitions_count:u32][partition_id:u32 x count]
 */
export interface ConsumerGroupInfo {
  readonly id: number;
  readonly partitionsCount: number;
  readonly membersCount: number;
  readonly name: string;
}

export interface ConsumerGroupMember {
  readonly id: number;
  readonly partitions: readonly number[];
}

/** membersCount === members.length. */
export interface ConsumerGroupDetails extends ConsumerGroupInfo {
  readonly members: readonly ConsumerGroupMember[];
}

export interface ConsumerGroupAssignment {
  /** Monotonic group generation. */
  readonly generation: bigint;
  /** Partitions this member currently owns. */
  readonly partitions: readonly number[];
}

export function writeConsumerGroupInfo(w: ByteWriter, g: ConsumerGroupInfo): void {
  w.u32(g.id).u32(g.partitionsCount).u32(g.membersCount);
  writeName(w, g.name);
}

export function readConsumerGroupInfo(r: ByteReader): ConsumerGroupInfo {
  const id = r.u32('group_id');
  const partitionsCount = r.u32('partitions_count');
  const membersCount = r.u32('members_count');
  const name = readName(r, 'group_name');
  return { id, partitionsCount, membersCount, name };
}

function writeU32List(w: ByteWriter, values: readonly number[]): void {
  w.u32(values.length);
  for (const v of values) w.u32(v);
}

function readU32List(r: ByteReader, what: string): number[] {
  const count = r.u32(`${what}_count`);
  const out: number[] = [];
  if (checkCount(r, count, 4, what)) {
    for (let i = 0; i < count && !r.failed; i++) out.push(r.u32(what));
  }
  return out;
}

export const CONSUMER_GROUP_INFO: BodyParts<ConsumerGroupInfo> = { write: writeConsumerGroupInfo, read: readConsumerGroupInfo };

export const CONSUMER_GROUP_DETAILS: BodyParts<ConsumerGroupDetails> = {
  write: (w, g) => {
    assert(g.members.length === g.membersCount, 'ConsumerGroupDetails: membersCount must equal members.length');
    writeConsumerGroupInfo(w, g);
    for (const m of g.members) {
      w.u32(m.id);
      writeU32List(w, m.partitions);
    }
  },
  read: (r) => {
    const group = readConsumerGroupInfo(r);
    const members: ConsumerGroupMember[] = [];
    if (checkCount(r, group.membersCount, 8, 'members')) {
      for (let i = 0; i < group.membersCount && !r.failed; i++) {
        const id = r.u32('member_id');
        members.push({ id, partitions: readU32List(r, 'member_partitions') });
      }
    }
    return { ...group, members };
  },
};

export const CONSUMER_GROUP_ASSIGNMENT: BodyParts<ConsumerGroupAssignment> = {
  write: (w, a) => {
    w.u64(a.generation);
    writeU32List(w, a.partitions);
  },
  read: (r) => ({ generation: r.u64('generation'), partitions: readU32List(r, 'assigned_partitions') }),
};
