import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { readName, writeName } from '../encodings/name.js';
import { type OptionEntry, readPrefixedOptions, writePrefixedOptions } from '../encodings/options-block.js';
import type { BodyParts } from './command-codec.js';
import { type Permissions, readLengthPrefixedPermissions, writeLengthPrefixedPermissions } from './permissions.js';

/**
 * User and personal-access-token records (apache/iggy core/binary_protocol/src/responses/users/
 * user_response.rs, get_user.rs, get_users.rs; responses/personal_access_tokens/*;
 * pre-VSR core/binary_protocol/src/utils/mapper.rs for the raw token):
 *
 *   UserResponse   [id:u32][created_at:u64][status:u8][username:Name][options_len:u32][options]
 *   UserDetails    [UserResponse] then 4 zero bytes (no permissions)
 *                                 or [0x01][permissions_len:u32][permissions]
 *   GetUsers       [UserResponse]* to the end
 *   PAT entry      [name:Name][expiry_at:u64]   (0 = never expires)
 *   GetPATs        [PAT entry]* to the end
 *   raw PAT        [token_len:u8][token]         (CreatePersonalAccessToken reply)
 */
export const UserStatus = { Active: 1, Inactive: 2 } as const;

export interface UserInfo {
  readonly id: number;
  readonly createdAt: bigint;
  /** 1 active, 2 inactive. */
  readonly status: number;
  readonly username: string;
  /** The options the client sent at create (user_response.rs: one client-explicit block). */
  readonly options: readonly OptionEntry[];
}

export interface UserDetails extends UserInfo {
  readonly permissions: Permissions | null;
}

export interface PersonalAccessTokenInfo {
  readonly name: string;
  /** µs since the epoch; 0 = never expires. */
  readonly expiryAt: bigint;
}

export interface RawPersonalAccessToken {
  readonly token: string;
}

export function readUserStatus(r: ByteReader): number {
  const status = r.u8('user_status');
  if (!r.failed && status !== UserStatus.Active && status !== UserStatus.Inactive) r.fail('invalid_user_status');
  return status;
}

export function writeUserInfo(w: ByteWriter, u: UserInfo): void {
  w.u32(u.id).u64(u.createdAt).u8(u.status);
  writeName(w, u.username);
  writePrefixedOptions(w, u.options);
}

export function readUserInfo(r: ByteReader): UserInfo {
  const id = r.u32('user_id');
  const createdAt = r.u64('created_at');
  const status = readUserStatus(r);
  const username = readName(r, 'username');
  const options = readPrefixedOptions(r, 'user_options');
  return { id, createdAt, status, username, options };
}

export const USER_INFO: BodyParts<UserInfo> = { write: writeUserInfo, read: readUserInfo };

export const USER_DETAILS: BodyParts<UserDetails> = {
  write: (w, u) => {
    writeUserInfo(w, u);
    if (u.permissions === null) {
      w.u32(0);
    } else {
      w.u8(1);
      writeLengthPrefixedPermissions(w, u.permissions);
    }
  },
  read: (r) => {
    const user = readUserInfo(r);
    const flag = r.u8('has_permissions');
    let permissions: Permissions | null = null;
    if (flag === 0) {
      // The "no permissions" form is a u32 zero: its first byte was the flag.
      const pad = r.bytesView(3, 'permissions_padding');
      if (!r.failed && pad.some((b) => b !== 0)) r.fail('permissions_padding_nonzero');
    } else if (flag === 1) {
      permissions = readLengthPrefixedPermissions(r);
    } else if (!r.failed) {
      r.fail('invalid_has_permissions');
    }
    return { ...user, permissions };
  },
};

export const PERSONAL_ACCESS_TOKEN_INFO: BodyParts<PersonalAccessTokenInfo> = {
  write: (w, t) => {
    writeName(w, t.name);
    w.u64(t.expiryAt);
  },
  read: (r) => ({ name: readName(r, 'token_name'), expiryAt: r.u64('expiry_at') }),
};

export const RAW_PERSONAL_ACCESS_TOKEN: BodyParts<RawPersonalAccessToken> = {
  write: (w, t) => writeName(w, t.token),
  read: (r) => ({ token: readName(r, 'token') }),
};
