import {
  ErrorCode, type Permissions, type UserDetails, type UserInfo, changePasswordCommand, createUserCommand, deleteUserCommand,
  updatePermissionsCommand, updateUserCommand,
} from '@shoal/protocol';
import { type ApplyContext, findUser } from './lookup.js';
import { type MetadataModel, type User, UserStatusCode, sortedOptions } from './model.js';
import { isValidUsername } from './names.js';
import { NotFound, type Outcome, accepted, rejected } from './outcome.js';
import { ALL_PERMISSIONS, ROOT_USER_ID, canManageUsers } from './permissions.js';
import { checkEmptyScope } from './topic-options.js';
import { toOptionEntries } from './topics.js';

/**
 * User operations (141..145). Bodies are the admitted forms: the password slots carry the host's
 * hash string, never plaintext (internal-bodies.ts). The FIRST user ever created is the root user:
 * a CreateUser that commits while no user exists is the bootstrap (proposed by the host on first
 * boot with `buildRootUserCreateBody`); it gets id 0, active status and every permission whatever
 * the body says. Root cannot be deleted (CannotDeleteUser) and its permissions cannot change
 * (CannotChangePermissions).
 *
 * User-management ops are authorized before resolving the target (unscoped manage_users, as the
 * reference gate), except ChangePassword: a user may always change their own password.
 */
export const USER_ID_MAX = 0xffff_fffe;

export function userDetails(user: User): UserDetails {
  return { ...userInfo(user), permissions: user.permissions };
}

/** The UserResponse of a user: its stored options are the ones the client sent at create. */
export function userInfo(user: User): UserInfo {
  return { id: user.id, createdAt: user.createdAt, status: user.status, username: user.username, options: toOptionEntries(sortedOptions(user.options)) };
}

/** A status code as the reference applies it: unknown codes create Active users and update nothing. */
function knownStatus(status: number): number | null {
  return status === UserStatusCode.Active || status === UserStatusCode.Inactive ? status : null;
}

export function applyCreateUser(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = createUserCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const r = req.value;
  const bootstrap = model.users.size === 0;
  if (!bootstrap && !canManageUsers(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  if (!isValidUsername(r.username)) return rejected(ErrorCode.InvalidUsername);
  if (model.userIndex.has(r.username)) return rejected(ErrorCode.UserAlreadyExists);
  if (r.password.length === 0) return rejected(ErrorCode.InvalidPassword);
  const optionsProblem = checkEmptyScope(r.options);
  if (optionsProblem !== null) return rejected(optionsProblem);
  const id = bootstrap ? ROOT_USER_ID : model.users.nextId();
  if (id > USER_ID_MAX) return rejected(ErrorCode.UsersLimitReached);
  const user: User = {
    id, username: r.username, passwordHash: r.password, status: bootstrap ? UserStatusCode.Active : (knownStatus(r.status) ?? UserStatusCode.Active),
    createdAt: ctx.timestamp, permissions: bootstrap ? ALL_PERMISSIONS : normalizePermissions(r.permissions), options: new Map(), tokens: new Map(),
  };
  model.users.insert(id, user);
  model.userIndex.set(user.username, id);
  return accepted(createUserCommand.encodeResponse(userDetails(user)));
}

export function applyUpdateUser(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = updateUserCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  if (!canManageUsers(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  const user = findUser(model, req.value.userId);
  if (user === undefined) return rejected(NotFound.user);
  const { username, status, options } = req.value;
  if (username !== null) {
    if (!isValidUsername(username)) return rejected(ErrorCode.InvalidUsername);
    const holder = model.userIndex.get(username);
    if (holder !== undefined && holder !== user.id) return rejected(ErrorCode.UserAlreadyExists);
  }
  const optionsProblem = checkEmptyScope(options);
  if (optionsProblem !== null) return rejected(optionsProblem);
  if (username !== null) {
    model.userIndex.delete(user.username);
    user.username = username;
    model.userIndex.set(username, user.id);
  }
  const newStatus = status === null ? null : knownStatus(status);
  if (newStatus !== null) user.status = newStatus;
  return accepted();
}

export function applyDeleteUser(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = deleteUserCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  if (!canManageUsers(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  const user = findUser(model, req.value.userId);
  if (user === undefined) return rejected(NotFound.user);
  if (user.id === ROOT_USER_ID) return rejected(ErrorCode.CannotDeleteUser);
  for (const token of user.tokens.values()) model.tokenIndex.delete(token.tokenHash);
  model.users.delete(user.id);
  model.userIndex.delete(user.username);
  return accepted();
}

/** 144 (admitted): current password verified by the host at admission; new slot = hash. */
export function applyChangePassword(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = changePasswordCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  const user = findUser(model, req.value.userId);
  if (user === undefined) return rejected(NotFound.user);
  if (user.id !== ctx.userId && !canManageUsers(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  if (req.value.newPassword.length === 0) return rejected(ErrorCode.InvalidPassword);
  user.passwordHash = req.value.newPassword;
  return accepted();
}

export function applyUpdatePermissions(model: MetadataModel, body: Uint8Array, ctx: ApplyContext): Outcome {
  const req = updatePermissionsCommand.decodeRequest(body);
  if (!req.ok) return rejected(ErrorCode.InvalidCommand);
  if (!canManageUsers(model.users.get(ctx.userId))) return rejected(ErrorCode.Unauthorized);
  const user = findUser(model, req.value.userId);
  if (user === undefined) return rejected(NotFound.user);
  if (user.id === ROOT_USER_ID) return rejected(ErrorCode.CannotChangePermissions);
  user.permissions = normalizePermissions(req.value.permissions);
  return accepted();
}

/** Stream and topic scopes in ascending id order, one entry per id (the last one wins). */
export function normalizePermissions(p: Permissions | null): Permissions | null {
  if (p === null) return null;
  const streams = new Map<number, Permissions['streams'][number]>();
  for (const s of p.streams) {
    const topics = new Map<number, (typeof s.topics)[number]>();
    for (const t of s.topics) topics.set(t.topicId, t);
    streams.set(s.streamId, { ...s, topics: [...topics.values()].sort((a, b) => a.topicId - b.topicId) });
  }
  return { global: p.global, streams: [...streams.values()].sort((a, b) => a.streamId - b.streamId) };
}
