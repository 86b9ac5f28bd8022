/**
 * Balanced leadership (docs/cluster.md "Balanced leadership"): which replica a partition group
 * prefers as its primary, the same on every node (a function of the group id and the roster
 * size only), so a topic's partitions are led round-robin by the nodes from the moment they are
 * created, and no wire byte changes: a group simply starts in the view its preferred replica
 * leads (`view % n` is the primary, as always).
 *
 *   preferred(stream << 32 | topic << 20 | partition, n) = (stream + topic + partition) mod n
 *
 * Consecutive partitions of a topic go to consecutive replicas (3 partitions on 3 nodes: one
 * each), and each topic starts one replica further than the previous one of its stream.
 */
import { unpackPartitionGroup } from '@shoal/protocol';

export function preferredPrimary(group: bigint, replicaCount: number): number {
  if (replicaCount <= 1) return 0;
  const unpacked = unpackPartitionGroup(group);
  if (!unpacked.ok) return 0;
  const { stream, topic, partition } = unpacked.value;
  return (stream + topic + partition) % replicaCount;
}
