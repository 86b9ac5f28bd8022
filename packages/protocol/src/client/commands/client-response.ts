import { assert } from '@shoal/stdx';
import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { checkCount } from '../../codec/body-codec.js';
import { readLongString, writeLongString } from '../encodings/name.js';
import type { BodyParts } from './command-codec.js';

/**
 * Client session records (apache/iggy core/binary_protocol/src/responses/clients/client_response.rs,
 * get_client.rs, get_clients.rs):
 *
 *   ClientResponse   [client_id:u32][user_id:u32 (u32::MAX = none)][transport:u8]
 *                    [address_len:u32][address][consumer_groups_count:u32]
 *   ClientDetails    [ClientResponse][ {stream_id:u32, topic_id:u32, group_id:u32} x count ]
 *   GetClients       [ClientResponse]* to the end
 *   GetMe            ClientDetails of the caller (the SDK decodes it with the GetClient mapper)
 * Transport codes: 1 TCP, 2 QUIC, 3 HTTP, 4 WebSocket.
 */
export const Transport = { Tcp: 1, Quic: 2, Http: 3, WebSocket: 4 } as const;
export const NO_USER_ID = 0xffff_ffff;

export interface ClientInfo {
  readonly clientId: number;
  /** null when the session is not logged in (u32::MAX on the wire). */
  readonly userId: number | null;
  readonly transport: number;
  readonly address: string;
  readonly consumerGroupsCount: number;
}

export interface ConsumerGroupMembership {
  readonly streamId: number;
  readonly topicId: number;
  readonly groupId: number;
}

/** consumerGroupsCount === consumerGroups.length. */
export interface ClientDetails extends ClientInfo {
  readonly consumerGroups: readonly ConsumerGroupMembership[];
}

export function writeClientInfo(w: ByteWriter, c: ClientInfo): void {
  assert(c.userId !== NO_USER_ID, 'userId u32::MAX means "none": use null');
  w.u32(c.clientId).u32(c.userId ?? NO_USER_ID).u8(c.transport);
  writeLongString(w, c.address);
  w.u32(c.consumerGroupsCount);
}

export function readClientInfo(r: ByteReader): ClientInfo {
  const clientId = r.u32('client_id');
  const userId = r.u32('user_id');
  const transport = r.u8('transport');
  const address = readLongString(r, 'address');
  const consumerGroupsCount = r.u32('consumer_groups_count');
  return { clientId, userId: userId === NO_USER_ID ? null : userId, transport, address, consumerGroupsCount };
}

export const CLIENT_INFO: BodyParts<ClientInfo> = { write: writeClientInfo, read: readClientInfo };

export const CLIENT_DETAILS: BodyParts<ClientDetails> = {
  write: (w, c) => {
    assert(c.consumerGroups.length === c.consumerGroupsCount, 'ClientDetails: consumerGroupsCount must equal consumerGroups.length');
    writeClientInfo(w, c);
    for (const g of c.consumerGroups) w.u32(g.streamId).u32(g.topicId).u32(g.groupId);
  },
  read: (r) => {
    const client = readClientInfo(r);
    const consumerGroups: ConsumerGroupMembership[] = [];
    if (checkCount(r, client.consumerGroupsCount, 12, 'consumer_groups')) {
      for (let i = 0; i < client.consumerGroupsCount && !r.failed; i++) {
        consumerGroups.push({ streamId: r.u32('stream_id'), topicId: r.u32('topic_id'), groupId: r.u32('group_id') });
      }
    }
    return { ...client, consumerGroups };
  },
};
