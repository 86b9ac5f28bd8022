import { fromHex, toHex } from '@shoal/stdx';
import {
  BATCH_PREFIX, EVICTION_HEADER, EvictionReason, NON_REPLICATED_CODE_OFFSET, REJECTION_SECTION_LENGTH, REPLY_HEADER,
  REQUEST_HEADER, ROUTED_REQUEST_HEADER, SIZE_OFFSET, COMMAND_OFFSET, decodeClientVersionInfo, decodeIdentifier,
  decodePartitioning, encodeClientVersionInfo, encodePartitioning, encodeResultRejection, encodeResultSuccess,
  formatProtocolVersion, isProtocolCompatible, packProtocolVersion, parseProtocolVersion, parseResultSection,
  sendMessagesCommand, defaultProtocolVersionMin,
} from '../../src/client/index.js';
import { type VectorChecker, type VectorOutcome, checkEntry, expectEqual } from './outcome.js';

/**
 * Checks the client-plane facts of a rust_test_values.json-format document: protocol_version,
 * client_version_info, reply_result_section, send_messages_response, partitioning,
 * identifier_rejected_hex, eviction_reason_discriminants, the client-header entries of `offsets`
 * and batch.offsets. Keys are interpreted by their shape (e.g. `pack(a,b,c)`, `parse '…'`,
 * `*_hex`), so a file with other entries of the same kinds is checked the same way; sections that
 * belong to the replica plane are left to its checker.
 */
export const checkRustTestValuesClient: VectorChecker = (doc, fileName) => {
  const out: VectorOutcome[] = [];
  const root = asRecord(doc);
  if (root === null) return [{ id: `${fileName}#`, ok: false, detail: 'document is not an object' }];
  const id = (section: string, key: string): string => `${fileName}#${section}/${key}`;

  const version = asRecord(root['protocol_version']);
  if (version !== null) {
    for (const [key, value] of Object.entries(version)) {
      if (key === 'file') continue;
      out.push(checkEntry(id('protocol_version', key), () => checkProtocolVersionFact(key, value)));
    }
  }

  const cvi = asRecord(root['client_version_info']);
  if (cvi !== null) {
    for (const [key, value] of Object.entries(cvi)) {
      if (key === 'file') continue;
      out.push(checkEntry(id('client_version_info', key), () => checkClientVersionInfo(key, value)));
    }
  }

  const section = asRecord(root['reply_result_section']);
  if (section !== null) out.push(...checkResultSection(section, (k) => id('reply_result_section', k)));

  const send = asRecord(root['send_messages_response']);
  if (send !== null) {
    for (const [key, value] of Object.entries(send)) {
      if (key === 'file') continue;
      if (key === 'rejected') {
        list(value).forEach((v, i) => out.push(checkEntry(id('send_messages_response', `rejected/${i}`), () => {
          const decoded = sendMessagesCommand.decodeResponse(fromHex(leadingHex(v)));
          return decoded.ok ? 'accepted a response that must be rejected' : null;
        })));
      } else if (key.endsWith('_hex')) {
        out.push(checkEntry(id('send_messages_response', key), () => {
          const bytes = fromHex(str(value));
          const decoded = sendMessagesCommand.decodeResponse(bytes);
          if (!decoded.ok) return `rejected: ${decoded.reason}`;
          const count = /^(zero|one|two|three|\d+)_confirmations?_hex$/.exec(key)?.[1];
          const expectedCount = count === undefined ? null : ({ zero: 0, one: 1, two: 2, three: 3 } as Record<string, number>)[count] ?? Number(count);
          if (expectedCount !== null && decoded.value.confirmations.length !== expectedCount) return `expected ${expectedCount} confirmations, got ${decoded.value.confirmations.length}`;
          return expectEqual('re-encoded', toHex(sendMessagesCommand.encodeResponse(decoded.value)), toHex(bytes));
        }));
      }
    }
  }

  const partitioning = asRecord(root['partitioning']);
  if (partitioning !== null) {
    for (const [key, value] of Object.entries(partitioning)) {
      if (key === 'file') continue;
      if (key === 'rejected_hex') {
        list(value).forEach((v, i) => out.push(checkEntry(id('partitioning', `rejected_hex/${i}`), () =>
          decodePartitioning(fromHex(leadingHex(v))).ok ? `accepted ${String(v)}` : null)));
      } else if (key.endsWith('_hex')) {
        out.push(checkEntry(id('partitioning', key), () => checkPartitioning(key, str(value))));
      }
    }
  }

  const rejectedIds = asRecord(root['identifier_rejected_hex']);
  if (rejectedIds !== null) {
    for (const [key, value] of Object.entries(rejectedIds)) {
      if (key === 'file') continue;
      out.push(checkEntry(id('identifier_rejected_hex', key), () => (decodeIdentifier(fromHex(leadingHex(value))).ok ? `accepted ${String(value)}` : null)));
    }
  }

  const reasons = asRecord(asRecord(root['eviction_reason_discriminants'])?.['values']);
  if (reasons !== null) {
    for (const [name, value] of Object.entries(reasons)) {
      out.push(checkEntry(id('eviction_reason_discriminants', name), () =>
        expectEqual(name, (EvictionReason as Record<string, number>)[name], value)));
    }
  }

  const offsets = asRecord(root['offsets']);
  if (offsets !== null) {
    for (const [key, value] of Object.entries(offsets)) {
      const mine = clientOffset(key);
      if (mine === undefined) continue;
      out.push(checkEntry(id('offsets', key), () => expectEqual(key, mine, value)));
    }
  }

  const batchOffsets = asRecord(asRecord(root['batch'])?.['offsets']);
  if (batchOffsets !== null) {
    const mine: Record<string, number> = {
      batch_checksum: BATCH_PREFIX.batchChecksumOffset, message_count: BATCH_PREFIX.messageCountOffset, reserved_start: BATCH_PREFIX.reservedStart,
    };
    for (const [key, value] of Object.entries(batchOffsets)) {
      out.push(checkEntry(id('batch.offsets', key), () => (key in mine ? expectEqual(key, mine[key], value) : `unknown batch offset ${key}`)));
    }
  }
  return out;
};

export default checkRustTestValuesClient;

function checkProtocolVersionFact(key: string, value: unknown): string | null {
  let m = /^pack\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(key);
  if (m !== null) return expectEqual(key, packProtocolVersion(Number(m[1]), Number(m[2]), Number(m[3])), value);
  m = /^parse '(.*)'$/.exec(key);
  if (m !== null) {
    const parsed = parseProtocolVersion(m[1] ?? '');
    return parsed.ok ? expectEqual(key, parsed.value, value) : `${key}: rejected (${parsed.reason})`;
  }
  m = /^display pack\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(key);
  if (m !== null) return expectEqual(key, formatProtocolVersion(packProtocolVersion(Number(m[1]), Number(m[2]), Number(m[3]))), value);
  m = /^min for (\d+)\.(\d+)\.x$/.exec(key);
  if (m !== null) {
    const server = packProtocolVersion(Number(m[1]), Number(m[2]), 0);
    return expectEqual(key, defaultProtocolVersionMin(server), value);
  }
  if (key === 'compatibility') return checkCompatibilityRule(str(value));
  return `unrecognised protocol_version fact: ${key}`;
}

/**
 * The rule text of the reference, evaluated against our gate over a grid of 0.x servers and
 * clients (including patch ends, minor neighbours, the window bounds and u32 extremes).
 */
function checkCompatibilityRule(rule: string): string | null {
  const normalized = rule.replace(/\s+/g, ' ').trim();
  if (normalized !== 'client accepted iff client >= MIN and (client >> 10) <= (server >> 10)') return `unrecognised rule: ${rule}`;
  for (const [major, minor] of [[0, 1], [0, 10], [0, 11], [0, 12], [0, 1023]] as const) {
    for (const serverPatch of [0, 1, 1023]) {
      const server = packProtocolVersion(major, minor, serverPatch);
      const min = defaultProtocolVersionMin(server);
      const clients = [0, 1, min - 1, min, min + 1, server, server + 1, server | 1023, (server | 1023) + 1, server - 1024, 0x3fff_ffff, 0xffff_ffff];
      for (const client of clients) {
        if (client < 0 || client > 0xffff_ffff) continue;
        const expected = client >= min && Math.floor(client / 1024) <= Math.floor(server / 1024);
        const actual = isProtocolCompatible(client, { max: server, min });
        if (expected !== actual) return `gate(${client}) for server ${formatProtocolVersion(server)}: expected ${expected}, got ${actual}`;
      }
    }
  }
  return null;
}

/** Keys like `bytes_hex_for_rust_sdk_0.10.1_at_0.11.0`: SDK name, SDK version, protocol version. */
function checkClientVersionInfo(key: string, value: unknown): string | null {
  const bytes = fromHex(str(value));
  const decoded = decodeClientVersionInfo(bytes);
  if (!decoded.ok) return `rejected: ${decoded.reason}`;
  const again = toHex(encodeClientVersionInfo(decoded.value));
  if (again !== toHex(bytes)) return `re-encoded differs: ${again}`;
  const m = /^bytes_hex_for_(.+)_(\d+\.\d+\.\d+[^_]*)_at_(\d+\.\d+\.\d+)$/.exec(key);
  if (m === null) return null;
  const [, sdk = '', sdkVersion = '', protocol = ''] = m;
  const packed = parseProtocolVersion(protocol);
  if (!packed.ok) return `bad protocol in key: ${protocol}`;
  return expectEqual('sdk_name', decoded.value.sdkName, sdk.replace(/_/g, '-')) ??
    expectEqual('sdk_version', decoded.value.sdkVersion, sdkVersion) ??
    expectEqual('protocol_version', decoded.value.protocolVersion, packed.value);
}

function checkResultSection(section: Record<string, unknown>, id: (key: string) => string): VectorOutcome[] {
  const out: VectorOutcome[] = [];
  if (section['success_body_hex'] !== undefined) {
    out.push(checkEntry(id('success_body_hex'), () => {
      const body = fromHex(str(section['success_body_hex']));
      const parsed = parseResultSection(body);
      if (!parsed.ok) return `rejected: ${parsed.reason}`;
      const problem = expectEqual('code', parsed.value.code, section['success_code'] ?? 0) ??
        (section['payload_offset'] === undefined ? null : expectEqual('payload_offset', parsed.value.sectionLength, section['payload_offset']));
      if (problem !== null) return problem;
      return expectEqual('re-encoded', toHex(encodeResultSuccess(parsed.value.payload)), toHex(body));
    }));
  }
  if (section['rejection_body_hex'] !== undefined) {
    out.push(checkEntry(id('rejection_body_hex'), () => {
      const body = fromHex(str(section['rejection_body_hex']));
      const parsed = parseResultSection(body);
      if (!parsed.ok) return `rejected: ${parsed.reason}`;
      const problem = (section['rejection_code'] === undefined ? null : expectEqual('code', parsed.value.code, section['rejection_code'])) ??
        (section['rejection_section_len'] === undefined ? null : expectEqual('section_len', parsed.value.sectionLength, section['rejection_section_len'])) ??
        expectEqual('REJECTION_SECTION_LENGTH', REJECTION_SECTION_LENGTH, parsed.value.sectionLength);
      if (problem !== null) return problem;
      return expectEqual('re-encoded', toHex(encodeResultRejection(parsed.value.code)), toHex(body));
    }));
  }
  list(section['malformed_none']).forEach((v, i) => out.push(checkEntry(id(`malformed_none/${i}`), () =>
    parseResultSection(fromHex(leadingHex(v))).ok ? `accepted malformed section ${String(v)}` : null)));
  return out;
}

function checkPartitioning(key: string, hex: string): string | null {
  const bytes = fromHex(hex);
  const decoded = decodePartitioning(bytes);
  if (!decoded.ok) return `rejected: ${decoded.reason}`;
  if (key.startsWith('balanced') && decoded.value.kind !== 'balanced') return `expected balanced, got ${decoded.value.kind}`;
  const m = /^partition_id_(\d+)_hex$/.exec(key);
  if (m !== null) {
    if (decoded.value.kind !== 'partition_id') return `expected partition_id, got ${decoded.value.kind}`;
    const problem = expectEqual('partition id', decoded.value.partitionId, Number(m[1]));
    if (problem !== null) return problem;
  }
  return expectEqual('re-encoded', toHex(encodePartitioning(decoded.value)), hex);
}

/** The offsets entries that name client-plane header fields. */
function clientOffset(key: string): number | undefined {
  if (key === 'size field') return SIZE_OFFSET;
  if (key === 'command') return COMMAND_OFFSET;
  const m = /^(RequestHeader|ReplyHeader|EvictionHeader|RoutedRequestHeader)\.(\w+)/.exec(key);
  if (m === null) return undefined;
  const camel = (m[2] ?? '').replace(/_([a-z])/g, (_x, c: string) => c.toUpperCase());
  const table: Record<string, Record<string, { readonly offset: number }>> = {
    RequestHeader: { ...REQUEST_HEADER, nonReplicatedCode: { offset: NON_REPLICATED_CODE_OFFSET } },
    ReplyHeader: REPLY_HEADER,
    EvictionHeader: EVICTION_HEADER,
    RoutedRequestHeader: ROUTED_REQUEST_HEADER,
  };
  return table[m[1] ?? '']?.[camel]?.offset ?? Number.NaN;
}

function leadingHex(value: unknown): string {
  const m = /^[0-9a-fA-F]*/.exec(str(value));
  return m?.[0] ?? '';
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string {
  if (typeof value !== 'string') throw new Error(`expected a string, got ${JSON.stringify(value)}`);
  return value;
}
