/**
 * The fields of the node's JSON the dashboard reads (the server's side is
 * packages/runtime/src/node/node-api.ts; docs/operations.md "JSON endpoints" lists them all).
 */

export interface PartitionJson {
  readonly partition: number;
  readonly group: string;
  readonly messages: number;
  readonly appended: number;
  readonly currentOffset: number;
  readonly bytes: number;
  readonly segments: number;
  readonly primary: boolean;
  readonly primaryReplica: number | null;
  readonly view: number;
  readonly op: number;
  readonly commit: number;
}

export interface ConsumerGroupJson {
  readonly id: number;
  readonly name: string;
  readonly members: number;
  readonly lag: number;
  readonly partitions: readonly { readonly partition: number; readonly storedOffset: number | null; readonly lag: number }[];
}

export interface StreamJson {
  readonly id: number;
  readonly name: string;
  readonly topics: readonly {
    readonly id: number;
    readonly name: string;
    readonly partitions: readonly PartitionJson[];
    readonly consumerGroups: readonly ConsumerGroupJson[];
  }[];
}

export interface GroupJson {
  readonly plane: 'metadata' | 'partition';
  readonly group: string;
  readonly name: string;
  readonly view: number;
  readonly primary: number | null;
  readonly role: 'primary' | 'backup';
  readonly op: number;
  readonly commit: number;
  readonly uncommitted: number;
}

export interface NodeJson {
  readonly node: {
    readonly name: string;
    readonly replicaId: number;
    readonly cluster: string | null;
    readonly version: string;
    readonly uptimeSeconds: number;
    readonly tcp: string | null;
    readonly http: string | null;
  };
  readonly ready: boolean;
  readonly readinessFailed: readonly string[];
  readonly metadata: { readonly view: number; readonly status: string; readonly primary: number | null; readonly commit: number };
  readonly peers: readonly { readonly replicaId: number; readonly name: string; readonly linkUp: boolean }[];
  readonly traffic: { readonly connections: number; readonly bytesReceived: number; readonly bytesSent: number; readonly messagesAppended: number };
  readonly groups: readonly GroupJson[];
  readonly streams: readonly StreamJson[];
  readonly at: number;
}

export interface ClusterNodeJson {
  readonly replicaId: number;
  readonly name: string;
  readonly http: string | null;
  readonly self: boolean;
  readonly linkUp: boolean;
  readonly reachable: boolean;
  readonly summary: NodeJson | null;
  readonly error: string | null;
}

export interface ClusterJson {
  readonly self: number;
  readonly cluster: string | null;
  readonly nodes: readonly ClusterNodeJson[];
  readonly at: number;
}
