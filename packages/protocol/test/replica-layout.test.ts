import { describe, expect, it } from 'vitest';
import {
  Command,
  COMMAND_MAX,
  COMMAND_NAMES,
  LAYOUT_BY_COMMAND,
  NAMED_LAYOUTS,
  PREFIX_LAYOUT,
  checkReplicaLayout,
  commandName,
  fieldsInOrder,
  isCommand,
  isSealedCommand,
  isPrepareCommand,
  isHandshakeCommand,
  layoutOf,
  type ReplicaHeaderLayout as HeaderLayout,
} from '../src/replica/index.js';
import { HEADER_SIZE } from '../src/replica/header-layout.js';

describe('command registry', () => {
  it('names every value 0..29 and nothing above', () => {
    expect(COMMAND_NAMES).toHaveLength(30);
    expect(COMMAND_MAX).toBe(29);
    for (let c = 0; c <= 29; c++) {
      expect(isCommand(c)).toBe(true);
      expect(Command[commandName(c) as keyof typeof Command]).toBe(c);
    }
    expect(isCommand(30)).toBe(false);
    expect(isCommand(-1)).toBe(false);
    expect(isCommand(1.5)).toBe(false);
    expect(commandName(30)).toBeUndefined();
    expect(commandName(6)).toBe('Prepare');
    expect(commandName(29)).toBe('ForwardLogoutResult');
  });

  it('classifies seals per §2.2', () => {
    const sealed = [7, 9, 10, 11, 12, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29];
    for (let c = 0; c <= 31; c++) expect(isSealedCommand(c), `command ${c}`).toBe(sealed.includes(c));
    expect([...Array(30).keys()].filter(isPrepareCommand)).toEqual([6, 19]);
    expect([...Array(30).keys()].filter(isHandshakeCommand)).toEqual([14, 15, 16]);
  });
});

describe('layout tables', () => {
  it('every named layout passes the self-check (contiguous, 256 bytes, common prefix, aligned)', () => {
    for (const [name, layout] of Object.entries(NAMED_LAYOUTS)) expect(checkReplicaLayout(name, layout), name).toBeNull();
  });

  it('gives every command a layout, frozen', () => {
    expect(LAYOUT_BY_COMMAND).toHaveLength(30);
    for (let c = 0; c <= 29; c++) {
      const layout = layoutOf(c) as HeaderLayout;
      expect(layout).toBeDefined();
      expect(Object.isFrozen(layout)).toBe(true);
      for (const spec of Object.values(layout)) expect(Object.isFrozen(spec)).toBe(true);
      const total = Object.values(layout).reduce((sum, spec) => sum + spec.size, 0);
      expect(total).toBe(HEADER_SIZE);
    }
    expect(layoutOf(30)).toBeUndefined();
    expect(layoutOf(Command.RepairPrepare)).toBe(layoutOf(Command.Prepare));
    expect(layoutOf(Command.RangeEvicted)).toBe(layoutOf(Command.RepairDone));
  });

  it('repeats the common prefix of §1.1 exactly', () => {
    expect(fieldsInOrder(PREFIX_LAYOUT).map(([n, s]) => `${n}@${s.offset}/${s.size}`)).toEqual([
      'checksum@0/16', 'checksumBody@16/16', 'cluster@32/16', 'size@48/4', 'view@52/4', 'release@56/4',
      'command@60/1', 'replica@61/1', 'reservedFrame@62/66',
    ]);
  });

  const broken = (mutate: (l: Record<string, { offset: number; size: number; kind: 'u8' | 'u32' | 'u64' | 'u128' | 'bytes' | 'reserved' }>) => void): string | null => {
    const copy: Record<string, { offset: number; size: number; kind: 'u8' | 'u32' | 'u64' | 'u128' | 'bytes' | 'reserved' }> = {};
    for (const [n, s] of Object.entries(NAMED_LAYOUTS['CommitHeader'] as HeaderLayout)) copy[n] = { ...s };
    mutate(copy);
    return checkReplicaLayout('Broken', copy);
  };

  it('the self-check catches a gap, an overlap, a wrong total, a wrong kind size, misalignment and a wrong prefix', () => {
    expect(broken(() => {})).toBeNull();
    expect(broken((l) => { (l['commit'] as { offset: number }).offset = 153; })).toMatch(/gap or overlap/);
    expect(broken((l) => { delete l['reserved']; })).toMatch(/totals 176/);
    expect(broken((l) => { (l['group'] as { size: number }).size = 4; l['pad'] = { offset: 172, size: 4, kind: 'reserved' }; })).toMatch(/u64 of size 4/);
    expect(broken((l) => {
      // u64 moved to an odd offset with the bytes around it re-tiled.
      l['checkpointOp'] = { offset: 160, size: 4, kind: 'reserved' };
      l['group'] = { offset: 164, size: 8, kind: 'u64' };
      l['reserved'] = { offset: 172, size: 84, kind: 'reserved' };
    })).toMatch(/misaligned/);
    expect(broken((l) => { (l['replica'] as { kind: string }).kind = 'reserved'; })).toMatch(/prefix/);
  });

  // Spec tables (replication-semantics.md §1.3, cluster.mdx) restated independently.
  const expected: Record<string, string> = {
    PrepareHeader: 'client@128 parent@144 requestChecksum@160 op@176 commit@184 timestamp@192 request@200 operation@208 padding@209 group@216 userId@224 reserved@228',
    PrepareOkHeader: 'parent@128 prepareChecksum@144 op@160 commit@168 timestamp@176 request@184 operation@192 padding@193 group@200 reserved@208',
    CommitHeader: 'commitChecksum@128 timestampMonotonic@144 commit@152 checkpointOp@160 group@168 reserved@176',
    StartViewChangeHeader: 'group@128 reserved@136',
    DoViewChangeHeader: 'op@128 commit@136 group@144 logView@152 reserved@156 nackBitset@224 presentBitset@240',
    StartViewHeader: 'op@128 commit@136 group@144 reserved@152 incarnation@240',
    RequestStartViewHeader: 'group@128 reserved@136 incarnation@240',
    RequestPreparesHeader: 'nonce@128 fromOp@144 toOp@152 group@160 reserved@168',
    RepairResponseHeader: 'nonce@128 op@144 group@152 reserved@160',
    RequestStateTransferHeader: 'nonce@128 group@144 reserved@152',
    StateTransferTargetHeader: 'nonce@128 commitOp@144 group@152 available@160 unavailableTransient@161 padding@162 commitMax@168 reserved@176',
    RequestStateChunkHeader: 'nonce@128 offset@144 group@152 len@160 artifact@164 reserved@168',
    StateChunkHeader: 'nonce@128 offset@144 group@152 artifact@160 reserved@164',
    ForwardRegisterHeader: 'client@128 nonce@144 userId@160 reserved@164',
    ForwardRegisterResultHeader: 'nonce@128 client@144 epoch@160 watermark@168 reserved@176 outcome@255',
    ForwardLogoutHeader: 'client@128 nonce@144 session@160 request@168 reserved@176',
    ForwardLogoutResultHeader: 'nonce@128 client@144 commit@160 reserved@168 outcome@255',
    RoutedRequestHeader: 'client@128 requestChecksum@144 timestamp@160 request@168 operation@176 padding@177 session@184 userId@192 code@196 reserved@200 group@248',
    ReplyHeader: 'requestChecksum@128 context@144 client@160 op@176 commit@184 timestamp@192 request@200 operation@208 padding@209 status@216 reserved@220',
    EvictionHeader: 'client@128 serverProtocolVersion@144 serverProtocolVersionMin@148 reserved@152 reason@255',
    HandshakeHeader: 'nonce@128 mac@160 status@192 reserved@193',
    GenericHeader: 'reservedCommand@128',
  };
  it('matches the per-command tables of the spec', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(NAMED_LAYOUTS).sort());
    for (const [name, text] of Object.entries(expected)) {
      const layout = NAMED_LAYOUTS[name] as HeaderLayout;
      const tail = fieldsInOrder(layout).filter(([, s]) => s.offset >= 128).map(([n, s]) => `${n}@${s.offset}`).join(' ');
      expect(tail, name).toBe(text);
    }
  });
});
