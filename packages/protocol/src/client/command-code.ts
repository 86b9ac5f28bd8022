import { Operation } from './operation.js';

/**
 * The u32 command codes of commands.mdx: one registry from code to its spec name and to the
 * `operation` it rides. Replicated commands are identified on the wire by `operation` alone;
 * non-replicated ones ride operation 2 with the code in RequestHeader bytes 196..200. Register
 * carries both 40 and 45 (the header does not say which: see `registerCodeOfBody` in login.ts).
 */
export const CommandCode = {
  Ping: 1,
  GetStats: 10,
  GetSnapshot: 11,
  GetClusterMetadata: 12,
  DescribeOptions: 13,
  GetMe: 20,
  GetClient: 21,
  GetClients: 22,
  GetUser: 31,
  GetUsers: 32,
  CreateUser: 33,
  DeleteUser: 34,
  UpdateUser: 35,
  UpdatePermissions: 36,
  ChangePassword: 37,
  LoginUser: 38,
  LogoutUser: 39,
  LoginRegister: 40,
  GetPersonalAccessTokens: 41,
  CreatePersonalAccessToken: 42,
  DeletePersonalAccessToken: 43,
  LoginWithPersonalAccessToken: 44,
  LoginRegisterWithPat: 45,
  PollMessages: 100,
  SendMessages: 101,
  FlushUnsavedBuffer: 102,
  GetConsumerOffset: 120,
  StoreConsumerOffset: 121,
  DeleteConsumerOffset: 122,
  GetStream: 200,
  GetStreams: 201,
  CreateStream: 202,
  DeleteStream: 203,
  UpdateStream: 204,
  PurgeStream: 205,
  GetTopic: 300,
  GetTopics: 301,
  CreateTopic: 302,
  DeleteTopic: 303,
  UpdateTopic: 304,
  PurgeTopic: 305,
  CreatePartitions: 402,
  DeletePartitions: 403,
  DeleteSegments: 503,
  GetConsumerGroup: 600,
  GetConsumerGroups: 601,
  CreateConsumerGroup: 602,
  DeleteConsumerGroup: 603,
  JoinConsumerGroup: 604,
  LeaveConsumerGroup: 605,
  SyncConsumerGroup: 606,
} as const;
export type CommandCode = (typeof CommandCode)[keyof typeof CommandCode];
export type CommandKey = keyof typeof CommandCode;

export interface CommandInfo {
  readonly code: CommandCode;
  /** The spec constant, e.g. `GET_STREAMS`. */
  readonly name: string;
  /** PascalCase key of `CommandCode`, e.g. `GetStreams`. */
  readonly key: CommandKey;
  /** snake_case, e.g. `get_streams` (the Rust/SDK decoder names). */
  readonly snake: string;
  /** The operation a request with this code rides. */
  readonly operation: Operation;
  /** Pre-register login shapes (38, 44): the server answers them with a MalformedLogin eviction. */
  readonly legacy: boolean;
  /** FLUSH_UNSAVED_BUFFER: parses, always fails with FeatureUnavailable. */
  readonly alwaysFails: boolean;
  /** Only PING is accepted before login. */
  readonly allowedUnauthenticated: boolean;
}

const REPLICATED: Partial<Record<CommandKey, Operation>> = {
  CreateUser: Operation.CreateUser,
  DeleteUser: Operation.DeleteUser,
  UpdateUser: Operation.UpdateUser,
  UpdatePermissions: Operation.UpdatePermissions,
  ChangePassword: Operation.ChangePassword,
  LogoutUser: Operation.Logout,
  LoginRegister: Operation.Register,
  LoginRegisterWithPat: Operation.Register,
  CreatePersonalAccessToken: Operation.CreatePersonalAccessToken,
  DeletePersonalAccessToken: Operation.DeletePersonalAccessToken,
  SendMessages: Operation.SendMessages,
  StoreConsumerOffset: Operation.StoreConsumerOffset,
  DeleteConsumerOffset: Operation.DeleteConsumerOffset,
  CreateStream: Operation.CreateStream,
  DeleteStream: Operation.DeleteStream,
  UpdateStream: Operation.UpdateStream,
  PurgeStream: Operation.PurgeStream,
  CreateTopic: Operation.CreateTopic,
  DeleteTopic: Operation.DeleteTopic,
  UpdateTopic: Operation.UpdateTopic,
  PurgeTopic: Operation.PurgeTopic,
  CreatePartitions: Operation.CreatePartitions,
  DeletePartitions: Operation.DeletePartitions,
  DeleteSegments: Operation.DeleteSegments,
  CreateConsumerGroup: Operation.CreateConsumerGroup,
  DeleteConsumerGroup: Operation.DeleteConsumerGroup,
  JoinConsumerGroup: Operation.JoinConsumerGroup,
  LeaveConsumerGroup: Operation.LeaveConsumerGroup,
};

function toSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c, i: number) => (i === 0 ? '' : '_') + c.toLowerCase());
}

/** The spec constant names differ from a mechanical conversion in a few places. */
const SPEC_NAMES: Partial<Record<CommandKey, string>> = {
  LoginRegisterWithPat: 'LOGIN_REGISTER_WITH_PAT',
};

export const COMMANDS: readonly CommandInfo[] = Object.freeze(
  (Object.entries(CommandCode) as [CommandKey, CommandCode][]).map(([key, code]) =>
    Object.freeze({
      code,
      name: SPEC_NAMES[key] ?? toSnake(key).toUpperCase(),
      key,
      snake: toSnake(key),
      operation: REPLICATED[key] ?? Operation.NonReplicated,
      legacy: key === 'LoginUser' || key === 'LoginWithPersonalAccessToken',
      alwaysFails: key === 'FlushUnsavedBuffer',
      allowedUnauthenticated: key === 'Ping',
    }),
  ),
);

const BY_CODE: ReadonlyMap<number, CommandInfo> = new Map(COMMANDS.map((c) => [c.code, c]));
const BY_NAME: ReadonlyMap<string, CommandInfo> = new Map(COMMANDS.flatMap((c) => [[c.name, c], [c.snake, c], [c.key, c]] as const));
const BY_OPERATION: ReadonlyMap<number, CommandInfo> = new Map(
  COMMANDS.filter((c) => c.operation !== Operation.NonReplicated && c.operation !== Operation.Register).map((c) => [c.operation, c]),
);

export function commandByCode(code: number): CommandInfo | null {
  return BY_CODE.get(code) ?? null;
}

/** Accepts the spec constant (`GET_STREAMS`), snake_case (`get_streams`) or the PascalCase key. */
export function commandByName(name: string): CommandInfo | null {
  return BY_NAME.get(name) ?? null;
}

export function isCommandCode(code: number): code is CommandCode {
  return BY_CODE.has(code);
}

/** The operation a request with `code` rides; null for an unknown code. */
export function operationForCode(code: number): Operation | null {
  return BY_CODE.get(code)?.operation ?? null;
}

/**
 * The command a replicated operation stands for (unique), Logout → 39. Null for NonReplicated
 * (the code is in the header) and Register (40 or 45, decided by the body).
 */
export function commandForOperation(operation: number): CommandInfo | null {
  return BY_OPERATION.get(operation) ?? null;
}

/** Non-replicated codes a request may carry at bytes 196..200. */
export function isNonReplicatedCode(code: number): boolean {
  const info = BY_CODE.get(code);
  return info !== undefined && info.operation === Operation.NonReplicated;
}
