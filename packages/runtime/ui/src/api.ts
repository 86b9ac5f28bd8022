/**
 * The node's JSON as the dashboard reads it: the server's own types (src/node/node-api.ts,
 * through the project reference), so a change to the JSON that the page does not follow fails
 * the build. docs/operations.md "JSON endpoints" lists every field.
 */
import type { ClusterNodeEntry, ClusterSummary, NodeSummary } from '../../src/node/node-api.js';

export type NodeJson = NodeSummary;
export type ClusterJson = ClusterSummary;
export type ClusterNodeJson = ClusterNodeEntry;
export type StreamJson = NodeSummary['streams'][number];
export type PartitionJson = StreamJson['topics'][number]['partitions'][number];
export type ConsumerGroupJson = StreamJson['topics'][number]['consumerGroups'][number];
