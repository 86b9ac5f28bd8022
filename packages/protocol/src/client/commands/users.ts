import type { ByteReader } from '../../codec/byte-reader.js';
import type { ByteWriter } from '../../codec/byte-writer.js';
import { readFlagIsOne } from '../../codec/body-codec.js';
import { CommandCode } from '../command-code.js';
import { type Identifier, readIdentifier, writeIdentifier } from '../encodings/identifier.js';
import { readName, readShortString, writeName, writeShortString } from '../encodings/name.js';
import { type OptionEntry, readOptionsToEnd, writeOptionsBlock } from '../encodings/options-block.js';
import { type BodyParts, EMPTY_BODY, type EmptyRequest, defineCommand, nullableWhenEmpty, sequenceToEnd } from './command-codec.js';
import { type Permissions, readLengthPrefixedPermissions, writeLengthPrefixedPermissions } from './permissions.js';
import { USER_DETAILS, USER_INFO, type UserDetails, type UserInfo } from './user-response.js';

/** User commands (commands.mdx "Users"). */
export interface UserIdRequest {
  readonly userId: Identifier;
}

export interface CreateUserRequest {
  readonly username: string;
  readonly password: string;
  /** 1 active, 2 inactive. */
  readonly status: number;
  readonly permissions: Permissions | null;
  readonly options: readonly OptionEntry[];
}

export interface UpdateUserRequest {
  readonly userId: Identifier;
  readonly username: string | null;
  readonly status: number | null;
  readonly options: readonly OptionEntry[];
}

export interface UpdatePermissionsRequest {
  readonly userId: Identifier;
  readonly permissions: Permissions | null;
}

export interface ChangePasswordRequest {
  readonly userId: Identifier;
  readonly currentPassword: string;
  readonly newPassword: string;
}

const USER_ID_BODY: BodyParts<UserIdRequest> = {
  write: (w, req) => writeIdentifier(w, req.userId),
  read: (r) => ({ userId: readIdentifier(r, 'user_id') }),
};

/** `[has_permissions:u8]` then, only when 1, `[permissions_len:u32][permissions]`. */
function writeOptionalPermissions(w: ByteWriter, permissions: Permissions | null): void {
  if (permissions === null) {
    w.u8(0);
  } else {
    w.u8(1);
    writeLengthPrefixedPermissions(w, permissions);
  }
}

/** Only a flag of exactly 1 carries permissions (requests/users/create_user.rs, update_permissions.rs). */
function readOptionalPermissions(r: ByteReader): Permissions | null {
  return readFlagIsOne(r, 'has_permissions') ? readLengthPrefixedPermissions(r, true) : null;
}

/**
 * A requested status, read raw as the reference does (`status: u8`): CreateUser stores an unknown
 * code as Active (`UserStatus::from_code(..).unwrap_or_default()`), UpdateUser ignores it.
 */
function readRequestedStatus(r: ByteReader): number {
  return r.u8('user_status');
}

export const getUserCommand = defineCommand<UserIdRequest, UserDetails | null>(CommandCode.GetUser, USER_ID_BODY, nullableWhenEmpty(USER_DETAILS));

export const getUsersCommand = defineCommand<EmptyRequest, UserInfo[]>(CommandCode.GetUsers, EMPTY_BODY, sequenceToEnd(USER_INFO));

/**
 * `[username:Name][password:u8 string][status:u8][has_permissions:u8][permissions_len:u32 + bytes,
 * only when 1][options block to end]`; reply: the created user's details.
 */
export const createUserCommand = defineCommand<CreateUserRequest, UserDetails>(
  CommandCode.CreateUser,
  {
    write: (w, req) => {
      writeName(w, req.username);
      writeShortString(w, req.password);
      w.u8(req.status);
      writeOptionalPermissions(w, req.permissions);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => {
      const username = readName(r, 'username');
      const password = readShortString(r, 'password');
      const status = readRequestedStatus(r);
      const permissions = readOptionalPermissions(r);
      return { username, password, status, permissions, options: readOptionsToEnd(r) };
    },
  },
  USER_DETAILS,
);

export const deleteUserCommand = defineCommand<UserIdRequest, null>(CommandCode.DeleteUser, USER_ID_BODY, null);

/**
 * `[user_id][has_username:u8][username:Name, only when 1][has_status:u8][status:u8, only when 1]
 * [options block to end]`.
 */
export const updateUserCommand = defineCommand<UpdateUserRequest, null>(
  CommandCode.UpdateUser,
  {
    write: (w, req) => {
      writeIdentifier(w, req.userId);
      if (req.username === null) {
        w.u8(0);
      } else {
        w.u8(1);
        writeName(w, req.username);
      }
      if (req.status === null) w.u8(0);
      else w.u8(1).u8(req.status);
      writeOptionsBlock(w, req.options);
    },
    read: (r) => {
      const userId = readIdentifier(r, 'user_id');
      const username = readFlagIsOne(r, 'has_username') ? readName(r, 'username') : null;
      const status = readFlagIsOne(r, 'has_status') ? readRequestedStatus(r) : null;
      return { userId, username, status, options: readOptionsToEnd(r) };
    },
  },
  null,
);

/** `[user_id][has_permissions:u8][permissions_len:u32 + bytes, only when 1]`. */
export const updatePermissionsCommand = defineCommand<UpdatePermissionsRequest, null>(
  CommandCode.UpdatePermissions,
  {
    write: (w, req) => {
      writeIdentifier(w, req.userId);
      writeOptionalPermissions(w, req.permissions);
    },
    read: (r) => ({ userId: readIdentifier(r, 'user_id'), permissions: readOptionalPermissions(r) }),
  },
  null,
);

/** `[user_id][current_password:u8 string][new_password:u8 string]`. */
export const changePasswordCommand = defineCommand<ChangePasswordRequest, null>(
  CommandCode.ChangePassword,
  {
    write: (w, req) => {
      writeIdentifier(w, req.userId);
      writeShortString(w, req.currentPassword);
      writeShortString(w, req.newPassword);
    },
    read: (r) => ({
      userId: readIdentifier(r, 'user_id'),
      currentPassword: readShortString(r, 'current_password'),
      newPassword: readShortString(r, 'new_password'),
    }),
  },
  null,
);
