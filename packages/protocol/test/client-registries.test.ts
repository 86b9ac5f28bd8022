import { describe, expect, it } from 'vitest';
import {
  COMMANDS, CommandCode, ERROR_CODES, ErrorCode, EvictionReason, Operation, SDK_INCOMPATIBLE_PROTOCOL_VERSION, commandByCode,
  commandByName, commandForOperation, errorCodeInfo, errorCodeName, evictionErrorCode, evictionReasonName, isClientAdmissible,
  isEvictionReason, isInternalOperation, isMetadataPlane, isNonReplicatedCode, isOperation, isPartitionPlane,
  isRequestChecksumStamped, isResultFramed, isRetriableErrorCode, operationForCode, operationName, operationPlane,
} from '../src/client/index.js';
import { readSpecFile } from '../../../test/support/fixtures.js';

const errorJson = JSON.parse(readSpecFile('error-codes.json')) as { code: number; name: string; message: string }[];

describe('Operation registry', () => {
  it('declares exactly 0..3, 64..68, 128..149, 160..162', () => {
    const declared = [...Array(256).keys()].filter(isOperation);
    const expected = [0, 1, 2, 3, 64, 65, 66, 67, 68, ...Array.from({ length: 22 }, (_, i) => 128 + i), 160, 161, 162];
    expect(declared).toEqual(expected);
    expect(operationName(68)).toBe('TruncatePartition');
    expect(operationName(131)).toBe('PurgeStream');
    expect(operationName(150)).toBeNull();
  });

  it('plane classification (framing.mdx table, replication-semantics §1.1)', () => {
    expect(operationPlane(0)).toBe('reserved');
    expect(operationPlane(1)).toBe('session');
    expect(operationPlane(3)).toBe('session');
    expect(operationPlane(2)).toBe('non_replicated');
    expect(operationPlane(66)).toBe('internal');
    expect(operationPlane(138)).toBe('metadata');
    expect(operationPlane(162)).toBe('partition');
    expect(operationPlane(4)).toBeNull();
    for (const op of [1, 3, 64, 68, 128, 137, 139, 149]) expect(isMetadataPlane(op), String(op)).toBe(true);
    for (const op of [0, 2, 138, 160, 161, 162, 150]) expect(isMetadataPlane(op), String(op)).toBe(false);
    for (const op of [160, 161, 162]) expect(isPartitionPlane(op)).toBe(true);
    expect(isPartitionPlane(138)).toBe(false);
  });

  it('client admissibility: 0 and the whole 64..127 band are refused', () => {
    for (let op = 0; op < 256; op++) {
      const expected = isOperation(op) && op !== 0 && !(op >= 64 && op <= 127);
      expect(isClientAdmissible(op), String(op)).toBe(expected);
    }
    expect(isInternalOperation(100)).toBe(true);
  });

  it('result framing: metadata and offset writes, Register only with a body, never 2, 3, 138, 160', () => {
    for (const op of [64, 68, 128, 131, 137, 139, 149, 161, 162]) expect(isResultFramed(op, 0), String(op)).toBe(true);
    for (const op of [0, 2, 3, 138, 160, 99]) expect(isResultFramed(op, 10), String(op)).toBe(false);
    expect(isResultFramed(Operation.Register, 0)).toBe(false);
    expect(isResultFramed(Operation.Register, 4)).toBe(true);
  });

  it('request_checksum stamping follows the Rust SDK', () => {
    for (const op of [1, 3, 128, 149, 64]) expect(isRequestChecksumStamped(op), String(op)).toBe(true);
    for (const op of [0, 2, 138, 160, 161, 162]) expect(isRequestChecksumStamped(op), String(op)).toBe(false);
  });
});

describe('command registry', () => {
  it('maps codes to operations', () => {
    expect(operationForCode(CommandCode.Ping)).toBe(Operation.NonReplicated);
    expect(operationForCode(CommandCode.LoginRegister)).toBe(Operation.Register);
    expect(operationForCode(CommandCode.LoginRegisterWithPat)).toBe(Operation.Register);
    expect(operationForCode(CommandCode.LogoutUser)).toBe(Operation.Logout);
    expect(operationForCode(CommandCode.LoginUser)).toBe(Operation.NonReplicated);
    expect(operationForCode(CommandCode.FlushUnsavedBuffer)).toBe(Operation.NonReplicated);
    expect(operationForCode(CommandCode.SendMessages)).toBe(Operation.SendMessages);
    expect(operationForCode(CommandCode.DeleteSegments)).toBe(Operation.DeleteSegments);
    expect(operationForCode(CommandCode.PurgeTopic)).toBe(Operation.PurgeTopic);
    expect(operationForCode(9999)).toBeNull();
  });

  it('every replicated client operation has exactly one command', () => {
    for (let op = 128; op < 163; op++) {
      if (!isOperation(op)) continue;
      expect(commandForOperation(op)?.operation, String(op)).toBe(op);
    }
    expect(commandForOperation(Operation.Logout)?.code).toBe(39);
    expect(commandForOperation(Operation.Register)).toBeNull();
    expect(commandForOperation(Operation.NonReplicated)).toBeNull();
  });

  it('flags legacy, always-failing and unauthenticated commands', () => {
    expect(COMMANDS.filter((c) => c.legacy).map((c) => c.code)).toEqual([38, 44]);
    expect(COMMANDS.filter((c) => c.alwaysFails).map((c) => c.name)).toEqual(['FLUSH_UNSAVED_BUFFER']);
    expect(COMMANDS.filter((c) => c.allowedUnauthenticated).map((c) => c.code)).toEqual([1]);
    expect(commandByName('get_streams')?.code).toBe(201);
    expect(commandByName('LOGIN_REGISTER_WITH_PAT')?.code).toBe(45);
    expect(commandByCode(606)?.snake).toBe('sync_consumer_group');
    expect(isNonReplicatedCode(606)).toBe(true);
    expect(isNonReplicatedCode(202)).toBe(false);
  });
});

describe('error codes', () => {
  it('mirror error-codes.json exactly', () => {
    expect(ERROR_CODES.length).toBe(errorJson.length);
    for (const e of errorJson) {
      expect(errorCodeInfo(e.code), String(e.code)).toMatchObject({ code: e.code, name: e.name, message: e.message });
      expect((ErrorCode as Record<string, number>)[e.name]).toBe(e.code);
    }
    expect(errorCodeName(1009)).toBe('StreamIdNotFound');
    expect(errorCodeInfo(17)).toBeNull();
  });

  it('retriable means the two transient codes', () => {
    expect(ERROR_CODES.filter((e) => e.retriable).map((e) => e.code)).toEqual([57, 58]);
    expect(isRetriableErrorCode(ErrorCode.TransientNotAccepted)).toBe(true);
    expect(isRetriableErrorCode(ErrorCode.Unauthenticated)).toBe(false);
  });
});

describe('eviction reasons', () => {
  it('discriminants and names', () => {
    expect(EvictionReason.IncompatibleProtocol).toBe(14);
    expect(evictionReasonName(15)).toBe('MalformedLogin');
    expect(isEvictionReason(0)).toBe(false);
    expect(isEvictionReason(15)).toBe(true);
    expect(isEvictionReason(16)).toBe(false);
  });

  it('maps to the SDK error codes', () => {
    expect(evictionErrorCode(9, 0, 0)).toBe(42);
    expect(evictionErrorCode(10, 0, 0)).toBe(53);
    for (const r of [1, 7, 8, 11, 12]) expect(evictionErrorCode(r, 0, 0)).toBe(40);
    expect(evictionErrorCode(13, 0, 0)).toBe(30);
    expect(evictionErrorCode(14, 11264, 11264)).toBe(SDK_INCOMPATIBLE_PROTOCOL_VERSION);
    expect(evictionErrorCode(14, 11264, 0)).toBe(40);
    expect(evictionErrorCode(14, 11263, 11264)).toBe(40);
    expect(evictionErrorCode(15, 0, 0)).toBe(4);
    for (const r of [0, 2, 3, 4, 5, 6, 99]) expect(evictionErrorCode(r, 0, 0)).toBe(3);
  });
});
