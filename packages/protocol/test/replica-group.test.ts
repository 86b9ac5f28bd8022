import { describe, expect, it } from 'vitest';
import { toHex } from '@shoal/stdx';
import {
  METADATA_GROUP,
  PARTITION_ID_LIMIT,
  STREAM_ID_LIMIT,
  TOPIC_ID_LIMIT,
  clusterIdBytes,
  clusterIdFromName,
  isMetadataGroup,
  isMetadataGroupAt,
  packPartitionGroup,
  unpackPartitionGroup,
} from '../src/replica/index.js';

describe('group ids (§10.1)', () => {
  it('packs and unpacks the golden examples', () => {
    const golden: [number, number, number, bigint][] = [
      [0, 0, 0, 0n],
      [5, 2, 7, 0x5_0020_0007n],
      [1, 0, 0, 0x1_0000_0000n],
      [4095, 4095, 999_999, 0xfff_ffff_423fn],
      [STREAM_ID_LIMIT - 1, TOPIC_ID_LIMIT - 1, PARTITION_ID_LIMIT - 1, 0xf_ffff_ffff_423fn],
    ];
    for (const [stream, topic, partition, group] of golden) {
      expect(packPartitionGroup(stream, topic, partition)).toEqual({ ok: true, value: group });
      expect(unpackPartitionGroup(group)).toEqual({ ok: true, value: { stream, topic, partition } });
    }
  });

  it('refuses out-of-range components instead of masking them', () => {
    expect(packPartitionGroup(STREAM_ID_LIMIT, 0, 0)).toEqual({ ok: false, reason: 'stream_id_out_of_range' });
    expect(packPartitionGroup(-1, 0, 0)).toEqual({ ok: false, reason: 'stream_id_out_of_range' });
    expect(packPartitionGroup(0, TOPIC_ID_LIMIT, 0)).toEqual({ ok: false, reason: 'topic_id_out_of_range' });
    expect(packPartitionGroup(0, 1.5, 0)).toEqual({ ok: false, reason: 'topic_id_out_of_range' });
    expect(packPartitionGroup(0, 0, PARTITION_ID_LIMIT)).toEqual({ ok: false, reason: 'partition_id_out_of_range' });
    expect(unpackPartitionGroup(METADATA_GROUP)).toEqual({ ok: false, reason: 'metadata_group' });
    expect(unpackPartitionGroup(1n << 52n)).toEqual({ ok: false, reason: 'group_reserved_bits_set' });
    expect(unpackPartitionGroup(-1n)).toEqual({ ok: false, reason: 'group_reserved_bits_set' });
    expect(unpackPartitionGroup(0xf_ffffn)).toEqual({ ok: false, reason: 'partition_id_out_of_range' });
  });

  it('recognises the metadata group as a bigint and in place', () => {
    expect(METADATA_GROUP).toBe(9223372036854775808n);
    expect(isMetadataGroup(METADATA_GROUP)).toBe(true);
    expect(isMetadataGroup(0n)).toBe(false);
    const bytes = new Uint8Array(16);
    new DataView(bytes.buffer).setBigUint64(4, METADATA_GROUP, true);
    expect(isMetadataGroupAt(bytes, 4)).toBe(true);
    new DataView(bytes.buffer).setBigUint64(4, METADATA_GROUP | 1n, true);
    expect(isMetadataGroupAt(bytes, 4)).toBe(false);
  });
});

describe('cluster id (§3.1)', () => {
  it('is the first 16 BLAKE3 bytes read little-endian', () => {
    expect(toHex(clusterIdBytes('iggy-cluster'))).toBe('21bb05c88727bab88d0ec27be8a72d46');
    expect(clusterIdFromName('iggy-cluster')).toBe(93283018645216948029300838641497914145n);
    expect(clusterIdFromName('iggy')).toBe(310035768193257280772771439352511865434n);
    expect(clusterIdFromName('ü')).not.toBe(clusterIdFromName('u'));
  });
});
