/**
 * Checker for the replica-plane facts of `rust_test_values.json` (values pinned by Rust unit
 * tests): namespace_golden, command_bit_patterns, eviction_reason_discriminants,
 * forward_register_outcomes, forward_logout_outcomes, handshake_status, offsets,
 * dvc_headers_max, forward_fixtures, control_header_minimal_sealed, state_manifest. The
 * client-plane facts of the same file are checked elsewhere; keys this checker does not own are
 * ignored.
 */
import { fromHex, toHex } from '@shoal/stdx';
import {
  Command,
  COMMAND_MAX,
  type CommandName,
  decodeHandshakeStatus,
  decodeHeaderFields,
  encodeHeader,
  ForwardLogoutOutcome,
  ForwardRegisterOutcome,
  HandshakeStatus,
  HANDSHAKE_LAYOUT,
  isCommand,
  isSealedCommand,
  layoutOf,
  METADATA_GROUP,
  NAMED_LAYOUTS,
  packPartitionGroup,
  PREFIX_LAYOUT,
  sealFrame,
  SUFFIX_ENTRIES_MAX,
  unpackPartitionGroup,
  validateHeader,
  verifyFrameSeal,
  type ReplicaHeaderLayout as HeaderLayout,
} from '../../src/replica/index.js';
import { HEADER_SIZE } from '../../src/replica/header-layout.js';
import { EvictionReason } from '../../src/replica/discriminants.js';
import { big, bytesEqual, camel, firstDifference, isRecord, num, problems, type Json } from './check-replica-frames.js';
import { checkEntry, expectEqual, type VectorChecker, type VectorOutcome } from './outcome.js';

/** "Name(log-only)" → "Name". */
function bareName(key: string): string {
  return key.replace(/\s*\(.*\)\s*$/, '').trim();
}

function compareRegistry(what: string, listed: unknown, ours: Readonly<Record<string, number>>): string | null {
  if (!isRecord(listed)) return `${what}: not an object`;
  const out: (string | null)[] = [];
  let compared = 0;
  for (const [key, value] of Object.entries(listed)) {
    const name = bareName(key);
    // Variant names only: skip notes ("file", "rule") and facts like "status_offset_in_header".
    if (typeof value !== 'number' || !/^[A-Z][A-Za-z0-9]*$/.test(name)) continue;
    const mine = ours[name];
    compared++;
    out.push(mine === undefined ? `${what}: we have no ${name}` : expectEqual(`${what}.${name}`, mine, value));
  }
  if (compared === 0) out.push(`${what}: nothing to compare`);
  return problems(out);
}

function checkNamespace(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const out: (string | null)[] = [];
  if (section['metadata_group'] !== undefined) {
    out.push(expectEqual('metadata_group', METADATA_GROUP, big(section['metadata_group'], 'metadata_group')));
    if (unpackPartitionGroup(METADATA_GROUP).ok) out.push('the metadata group unpacked as a partition group');
  }
  const vectors = Array.isArray(section['vectors']) ? section['vectors'] : [];
  vectors.forEach((raw, i) => {
    if (!isRecord(raw)) return;
    const stream = num(raw, 'stream');
    const topic = num(raw, 'topic');
    const partition = num(raw, 'partition');
    const group = big(raw['group'], 'group');
    const packed = packPartitionGroup(stream, topic, partition);
    if (!packed.ok) {
      out.push(`[${i}] pack refused: ${packed.reason}`);
      return;
    }
    out.push(expectEqual(`[${i}] group`, packed.value, group));
    if (typeof raw['group_hex'] === 'string') out.push(expectEqual(`[${i}] group_hex`, `0x${packed.value.toString(16)}`, raw['group_hex']));
    const unpacked = unpackPartitionGroup(group);
    if (!unpacked.ok) out.push(`[${i}] unpack refused: ${unpacked.reason}`);
    else out.push(expectEqual(`[${i}] unpack`, `${unpacked.value.stream}/${unpacked.value.topic}/${unpacked.value.partition}`, `${stream}/${topic}/${partition}`));
  });
  if (vectors.length === 0) out.push('no vectors');
  return problems(out);
}

function checkCommandBits(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const out: (string | null)[] = [];
  const range = typeof section['valid'] === 'string' ? section['valid'] : '';
  const valid = /^(\d+)\.\.(=?)(\d+)$/.exec(range);
  if (valid !== null) {
    const low = Number(valid[1]);
    const high = Number(valid[3]) - (valid[2] === '=' ? 0 : 1);
    out.push(expectEqual('lowest command', low, 0));
    out.push(expectEqual('highest command', high, COMMAND_MAX));
    for (let c = low; c <= high; c++) if (!isCommand(c) || layoutOf(c) === undefined) out.push(`command ${c} has no layout`);
  }
  if (section['first_invalid'] !== undefined) {
    const first = num(section, 'first_invalid');
    out.push(expectEqual('first invalid command', first, COMMAND_MAX + 1));
    if (isCommand(first)) out.push(`${first} reads as a command`);
    const frame = encodeHeader(Command.Commit, { cluster: 0n, view: 0, replica: 0, commitChecksum: 0n, timestampMonotonic: 0n, commit: 0n, checkpointOp: 0n, group: 0n });
    frame[60] = first;
    if (decodeHeaderFields(frame).ok) out.push(`a header with command ${first} decoded`);
    if (validateHeader(frame) === null) out.push(`a header with command ${first} validated`);
  }
  return problems(out);
}

function checkHandshakeStatus(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const out: (string | null)[] = [compareRegistry('handshake_status', section, HandshakeStatus)];
  if (section['status_offset_in_header'] !== undefined) {
    out.push(expectEqual('status offset', HANDSHAKE_LAYOUT.status.offset, num(section, 'status_offset_in_header')));
  }
  if (typeof section['decode_rule'] === 'string') {
    // byte 0 -> Ok; the declared reject values -> themselves; 1 and anything else -> UnknownCommand.
    for (let byte = 0; byte <= 0xff; byte++) {
      const decoded = decodeHandshakeStatus(byte);
      const expected = byte === 0 ? 0 : byte >= 2 && byte <= 5 ? byte : HandshakeStatus.UnknownCommand;
      if (decoded.accepted !== (byte === 0) || decoded.status !== expected) {
        out.push(`status byte ${byte} decoded to ${decoded.status} (accepted ${decoded.accepted})`);
      }
    }
  }
  return problems(out);
}

const HEADER_ALIASES: Readonly<Record<string, string>> = {
  RequestHeader: 'RoutedRequestHeader',
  RepairDoneHeader: 'RepairResponseHeader',
  RangeEvictedHeader: 'RepairResponseHeader',
  RepairPrepareHeader: 'PrepareHeader',
};

function layoutNamed(name: string): HeaderLayout | undefined {
  return NAMED_LAYOUTS[name] ?? NAMED_LAYOUTS[HEADER_ALIASES[name] ?? ''];
}

function checkOffsets(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const out: (string | null)[] = [];
  for (const [key, value] of Object.entries(section)) {
    if (typeof value !== 'number') continue;
    const bare = bareName(key);
    const dot = bare.indexOf('.');
    let offset: number | undefined;
    if (dot > 0) {
      const layout = layoutNamed(bare.slice(0, dot));
      offset = layout?.[camel(bare.slice(dot + 1))]?.offset;
    } else {
      // A prefix field named in words ("size field", "command").
      offset = PREFIX_LAYOUT[camel(bare.split(/\s+/)[0] ?? '') as keyof typeof PREFIX_LAYOUT]?.offset;
    }
    out.push(offset === undefined ? `offset ${key}: no such field in our tables` : expectEqual(`offset ${key}`, offset, value));
  }
  return problems(out);
}

/** A sealed, validated forwarding fixture; `outcome` is checked at byte 255 when given. */
function checkSealedFixture(what: string, hex: string, outcome?: number): string | null {
  const bytes = fromHex(hex);
  if (bytes.length !== HEADER_SIZE) return `${what}: ${bytes.length} bytes, expected ${HEADER_SIZE}`;
  const out: (string | null)[] = [];
  if (!verifyFrameSeal(bytes)) out.push(`${what}: seal does not verify`);
  const resealed = bytes.slice();
  sealFrame(resealed);
  if (!bytesEqual(resealed, bytes)) out.push(`${what}: re-seal differs: ${firstDifference(resealed, bytes)}`);
  const verdict = validateHeader(bytes);
  if (verdict !== null) out.push(`${what}: refused: ${verdict}`);
  if (outcome !== undefined) out.push(expectEqual(`${what}: outcome byte`, bytes[255], outcome));
  return problems(out);
}

function checkForwardFixtures(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const out: (string | null)[] = [];
  let seen = 0;
  for (const [key, value] of Object.entries(section)) {
    if (typeof value === 'string' && key.endsWith('_hex')) {
      seen++;
      out.push(checkSealedFixture(key, value));
    } else if (Array.isArray(value)) {
      const byOutcome = key.includes('by_outcome');
      value.forEach((hex, i) => {
        if (typeof hex !== 'string') return;
        seen++;
        out.push(checkSealedFixture(`${key}[${i}]`, hex, byOutcome ? i : undefined));
      });
    }
  }
  if (seen === 0) out.push('no fixtures');
  return problems(out);
}

function checkMinimalSealed(section: unknown): string | null {
  if (!isRecord(section)) return 'not an object';
  const byCommand = section['hex_by_command'];
  if (!isRecord(byCommand)) return 'hex_by_command missing';
  const out: (string | null)[] = [];
  for (const [name, hex] of Object.entries(byCommand)) {
    if (typeof hex !== 'string') continue;
    const command = (Command as Readonly<Record<string, number>>)[name as CommandName];
    if (command === undefined) {
      out.push(`${name}: no such command`);
      continue;
    }
    if (!isSealedCommand(command)) out.push(`${name}: we do not seal this command`);
    // The rule: an all-zero header with only command and size = 256, then sealed.
    const expected = new Uint8Array(HEADER_SIZE);
    expected[60] = command;
    expected[48] = HEADER_SIZE & 0xff;
    expected[49] = HEADER_SIZE >> 8;
    sealFrame(expected);
    const bytes = fromHex(hex);
    if (!bytesEqual(expected, bytes)) out.push(`${name}: ${firstDifference(expected, bytes)} (ours ${toHex(expected.subarray(0, 8))})`);
    if (!verifyFrameSeal(bytes)) out.push(`${name}: seal does not verify`);
  }
  return problems(out);
}

type SectionCheck = (section: unknown) => string | null;

const SECTIONS: Readonly<Record<string, SectionCheck>> = {
  namespace_golden: checkNamespace,
  command_bit_patterns: checkCommandBits,
  eviction_reason_discriminants: (s) => compareRegistry('eviction_reason', isRecord(s) ? s['values'] : s, EvictionReason),
  forward_register_outcomes: (s) => compareRegistry('forward_register_outcomes', s, ForwardRegisterOutcome),
  forward_logout_outcomes: (s) => compareRegistry('forward_logout_outcomes', s, ForwardLogoutOutcome),
  handshake_status: checkHandshakeStatus,
  offsets: checkOffsets,
  dvc_headers_max: (s) => expectEqual('dvc_headers_max', SUFFIX_ENTRIES_MAX, typeof s === 'number' ? s : Number(s)),
  forward_fixtures: checkForwardFixtures,
  control_header_minimal_sealed: checkMinimalSealed,
  // Points at manifest.json (rust_test_sample / longer_entries), checked by check-manifest.ts.
  state_manifest: (s) => (isRecord(s) ? null : 'not an object'),
};

export const checkRustTestValuesReplica: VectorChecker = (doc: unknown, fileName: string): VectorOutcome[] => {
  if (!isRecord(doc)) return [{ id: `${fileName}#`, ok: false, detail: 'document is not an object' }];
  const outcomes: VectorOutcome[] = [];
  for (const [key, check] of Object.entries(SECTIONS)) {
    if (!(key in doc)) continue;
    outcomes.push(checkEntry(`${fileName}#${key}`, () => check((doc as Json)[key])));
  }
  return outcomes;
};

export default checkRustTestValuesReplica;
