import { assert } from '@shoal/stdx';
import { checkCount } from '../../codec/body-codec.js';
import { CommandCode } from '../command-code.js';
import { isOptionsScope } from '../encodings/option-catalog.js';
import { CLIENT_DETAILS, CLIENT_INFO, type ClientDetails, type ClientInfo } from './client-response.js';
import { CLUSTER_METADATA, type ClusterMetadata } from './cluster-metadata.js';
import { EMPTY_BODY, type EmptyRequest, RAW_BYTES, defineCommand, nullableWhenEmpty, sequenceToEnd } from './command-codec.js';
import { OPTION_DESCRIPTORS, type OptionDescriptor } from './option-descriptors.js';
import { STATS, type Stats } from './stats-response.js';

/** System commands (commands.mdx "System"). */

/** Snapshot compression codes. */
export const SnapshotCompression = { Stored: 1, Deflated: 2, Bzip2: 3, Zstd: 4, Lzma: 5, Xz: 6 } as const;
/** Snapshot type codes. */
export const SnapshotType = {
  FilesystemOverview: 1, ProcessList: 2, ResourceUsage: 3, Test: 4, ServerLogs: 5, ServerConfig: 6, All: 100,
} as const;

const SNAPSHOT_TYPES: ReadonlySet<number> = new Set(Object.values(SnapshotType));

export interface GetSnapshotRequest {
  readonly compression: number;
  readonly types: readonly number[];
}

export interface DescribeOptionsRequest {
  /** 1 topic, 2 stream, 3 user. */
  readonly scope: number;
}

export interface GetClientRequest {
  readonly clientId: number;
}

export const pingCommand = defineCommand<EmptyRequest, null>(CommandCode.Ping, EMPTY_BODY, null);

export const getStatsCommand = defineCommand<EmptyRequest, Stats>(CommandCode.GetStats, EMPTY_BODY, STATS);

/** Request `[compression:u8][types_count:u8][type:u8 x count]`; reply: the snapshot archive bytes. */
export const getSnapshotCommand = defineCommand<GetSnapshotRequest, Uint8Array>(
  CommandCode.GetSnapshot,
  {
    write: (w, req) => {
      assert(req.types.length <= 255, 'at most 255 snapshot types');
      w.u8(req.compression).u8(req.types.length);
      for (const t of req.types) w.u8(t);
    },
    read: (r) => {
      const compression = r.u8('compression');
      if (!r.failed && (compression < SnapshotCompression.Stored || compression > SnapshotCompression.Xz)) r.fail('unknown_snapshot_compression');
      const count = r.u8('types_count');
      const types: number[] = [];
      if (checkCount(r, count, 1, 'snapshot_types')) {
        for (let i = 0; i < count && !r.failed; i++) {
          const t = r.u8('snapshot_type');
          if (!r.failed && !SNAPSHOT_TYPES.has(t)) r.fail('unknown_snapshot_type');
          types.push(t);
        }
      }
      return { compression, types };
    },
  },
  RAW_BYTES,
);

export const getClusterMetadataCommand = defineCommand<EmptyRequest, ClusterMetadata>(CommandCode.GetClusterMetadata, EMPTY_BODY, CLUSTER_METADATA);

/** Request `[scope:u8]`; reply: the option catalog of the scope. */
export const describeOptionsCommand = defineCommand<DescribeOptionsRequest, OptionDescriptor[]>(
  CommandCode.DescribeOptions,
  {
    write: (w, req) => {
      w.u8(req.scope);
    },
    read: (r) => {
      const scope = r.u8('scope');
      if (!r.failed && !isOptionsScope(scope)) r.fail('unknown_options_scope');
      return { scope };
    },
  },
  OPTION_DESCRIPTORS,
);

export const getMeCommand = defineCommand<EmptyRequest, ClientDetails>(CommandCode.GetMe, EMPTY_BODY, CLIENT_DETAILS);

/** Request `[client_id:u32]`; reply: client details, empty when not found. */
export const getClientCommand = defineCommand<GetClientRequest, ClientDetails | null>(
  CommandCode.GetClient,
  { write: (w, req) => void w.u32(req.clientId), read: (r) => ({ clientId: r.u32('client_id') }) },
  nullableWhenEmpty(CLIENT_DETAILS),
);

export const getClientsCommand = defineCommand<EmptyRequest, ClientInfo[]>(CommandCode.GetClients, EMPTY_BODY, sequenceToEnd(CLIENT_INFO));
