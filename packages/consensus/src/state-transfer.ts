/**
 * State transfer, protocol side (§6.3, §6.4, §6.7, §6.8). Pull-based and lockstep: at most one
 * chunk in flight. The core never holds artifact bytes: the requester's host stages chunks and
 * verifies whole artifacts (length + XXH3 against the manifest) at install; the server's host
 * builds offers and reads chunks. Stages (upstream asserts anything else):
 *
 *   idle ─▶ awaiting_target ─▶ fetching ─▶ installing ─▶ idle
 *                 │  ▲              │ │
 *                 ▼  └──────────────┘ └─▶ idle
 *                idle
 */
import { assert } from '@shoal/stdx';
import {
  ArtifactKind,
  Command,
  decodeManifest,
  encodeClientTable,
  encodeManifest,
  RequestStateChunkHeaderView,
  RequestStateTransferHeaderView,
  StateChunkHeaderView,
  StateTransferTargetHeaderView,
  type ManifestEntry,
} from '@shoal/protocol';
import { commitWalk } from './commit.js';
import type { Core } from './core.js';
import { Drop } from './drops.js';
import type { Completion } from './effects.js';
import { requestStateChunkFrame, requestStateTransferFrame, stateChunkFrame, stateTransferTargetFrame } from './frames.js';
import { Mark } from './marks.js';
import { startRepair } from './repair.js';
import { newNonce } from './repair-state.js';
import { decodeKey } from './state-transfer-state.js';
import { requestSuperblockWrite } from './superblock.js';
import { sendDirect } from './send.js';
import { pruneCanon } from './trust.js';
import type { Op, ReplicaIndex, TransferStage } from './types.js';

const LEGAL: Readonly<Record<TransferStage, readonly TransferStage[]>> = {
  idle: ['awaiting_target'],
  awaiting_target: ['fetching', 'idle'],
  fetching: ['installing', 'awaiting_target', 'idle'],
  installing: ['idle'],
};

const GIB = 1024 ** 3;
const DECODE_BUDGET = 5;
const STALL_BUDGET = 5;

export function setStage(c: Core, next: TransferStage): void {
  const from = c.transfer.stage;
  if (from === next) return;
  assert(LEGAL[from].includes(next), `state transfer: illegal stage transition ${from} -> ${next}`);
  c.transfer.stage = next;
  if (next === 'idle' || next === 'awaiting_target') {
    const s = c.transfer.session;
    if (s !== null && (next === 'idle' || s.manifest !== null)) {
      c.effects.push({ kind: 'transfer_discard', nonce: s.nonce });
      c.transfer.session = null;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Requester.

/** Arms a transfer against `peer` (from idle, or completing an awaited one). */
export function startTransfer(c: Core, peer: ReplicaIndex): void {
  if (peer === c.self) return;
  if (c.transfer.stage === 'idle') setStage(c, 'awaiting_target');
  if (c.transfer.stage !== 'awaiting_target' || c.transfer.session !== null) return;
  c.repair = null;
  const nonce = newNonce(c.prng);
  c.transfer.session = { nonce, peer, manifest: null, commitOp: 0, commitMax: 0, snapshotOp: 0, received: [], idleTicks: 0, stalledRounds: 0 };
  c.event('state_transfer', `request from ${peer}`);
  sendDirect(c, peer, requestStateTransferFrame(c, nonce));
}

/**
 * Abandons the transfer and falls back to journal repair from `peer` (§6.4 step 4). `damaged`: the
 * source's own artifacts failed to verify or decode past the budget, so its files are damaged (a
 * misdirected write into its segment) and every later offer of it fails the same way. The journal
 * repair then goes to another replica, in turn: asking the source again, typically the primary,
 * whose journal had evicted the range, only led back to a transfer of its damaged state, for good
 * while it stays primary (seeds 1047809 and 1084057 of 5). Any replica may serve repair, and what
 * it serves is trusted only once it chains to an anchor (trust.ts).
 */
function abandonToRepair(c: Core, peer: ReplicaIndex, why: string, damaged = false): void {
  const target = damaged ? fallbackSource(c, peer) : transferTarget(c, peer);
  c.mark(Mark.TransferFallbackRepair, why);
  c.event('state_transfer', `abandoned (${why}); journal repair from ${target}`);
  setStage(c, 'idle');
  c.transfer.cooldown = c.config.ticks.repairRetry;
  commitWalk(c);
  startRepair(c, target);
}

/** The next replica in turn that is neither us nor the damaged source (that source if none is). */
function fallbackSource(c: Core, damaged: ReplicaIndex): ReplicaIndex {
  const peers = c.others().filter((r) => r !== damaged);
  if (peers.length === 0) return damaged;
  const target = peers[c.transfer.fallbackTurn % peers.length] as ReplicaIndex;
  c.transfer.fallbackTurn += 1;
  return target;
}

/**
 * Only a caught-up primary serves offers (§6.4 step 2), so transfers (and the repair that follows
 * a refusal) go to the current view's primary when that is not us; otherwise to `peer`.
 */
export function transferTarget(c: Core, peer: ReplicaIndex): ReplicaIndex {
  const primary = c.primaryIndex();
  return c.status === 'normal' && primary !== c.self ? primary : peer;
}

function manifestProblem(c: Core, entries: readonly ManifestEntry[], commitOp: Op, commitMax: Op, view: number): Drop | null {
  let total = 0n;
  for (const e of entries) total += e.len;
  if (c.plane.kind === 'metadata') {
    if (!entries.some((e) => e.kind === ArtifactKind.MetadataSnapshot)) return Drop.NoSnapshotArtifact;
    for (const e of entries) {
      if (e.kind !== ArtifactKind.MetadataSnapshot && e.kind !== ArtifactKind.ClientTable) return Drop.UnknownArtifactKind;
      if (e.len > BigInt(GIB)) return Drop.ArtifactTooLarge;
    }
    if (total > 4n * BigInt(GIB)) return Drop.ManifestTooLarge;
    return null;
  }
  for (const e of entries) if (e.kind !== ArtifactKind.SegmentLog && e.kind !== ArtifactKind.ConsumerOffsets) return Drop.UnknownArtifactKind;
  if (total > 1024n * BigInt(GIB)) return Drop.ManifestTooLarge;
  if (commitOp > commitMax) return Drop.CommitOpAboveCommitMax;
  // Upstream also refuses an offer whose commit_max is below ours. But the offer is the state at
  // the primary's commit_min, committed whatever the primary still has to learn, and installing
  // it keeps our commit_max. A primary that restarted knows only its durable commit point: it
  // offered state 330 with commit_max 330 to a backup that had heard of commit 334, and needed
  // that backup's ack to commit 331-334 again, which it could not give before it held the state
  // below them (seed 1044292 of 3, replica 0 down for good: refused, repair evicted, for ever).
  // So such an offer is refused only when it cannot move us forward (and one of an older view).
  if (view < c.view || (commitMax < c.commitMax && commitOp <= c.commitMin)) return Drop.OfferBehind;
  return null;
}

const targetView = new StateTransferTargetHeaderView();

export function onStateTransferTarget(c: Core, frame: Uint8Array): string | null {
  const h = targetView.bind(frame, 0);
  const s = c.transfer.session;
  if (s === null || h.nonce !== s.nonce) return c.drop(Command.StateTransferTarget, h.replica, Drop.TransferNonceMismatch);
  if (c.transfer.stage !== 'awaiting_target' || s.manifest !== null) return c.drop(Command.StateTransferTarget, h.replica, Drop.TransferDuplicateTarget);
  if (h.available === 0) {
    abandonToRepair(c, s.peer, h.unavailableTransient === 1 ? 'refused (transient)' : 'refused');
    return null;
  }
  const decoded = decodeManifest(h.body);
  if (!decoded.ok) return c.dropInvalid(Command.StateTransferTarget, h.replica, decoded.reason);
  const entries = decoded.value.entries;
  const commitOp = h.commitOpNumber;
  const commitMax = h.commitMaxNumber;
  const problem = manifestProblem(c, entries, commitOp, commitMax, h.view);
  if (problem !== null) return c.drop(Command.StateTransferTarget, h.replica, problem);
  const snapshot = entries.find((e) => e.kind === ArtifactKind.MetadataSnapshot);
  const snapshotOp = snapshot === undefined ? commitOp : Number(snapshot.frontier);
  if (!Number.isSafeInteger(snapshotOp)) return c.drop(Command.StateTransferTarget, h.replica, Drop.SnapshotOpNotSafe);
  if ((c.transfer.decodeFailures.get(decodeKey(s.peer, snapshotOp)) ?? 0) > DECODE_BUDGET) {
    abandonToRepair(c, s.peer, `snapshot ${snapshotOp} from ${s.peer} failed to decode too often`, true);
    return null;
  }
  s.manifest = entries;
  s.commitOp = commitOp;
  s.commitMax = commitMax;
  s.snapshotOp = snapshotOp;
  s.received = entries.map(() => 0);
  s.idleTicks = 0;
  setStage(c, 'fetching');
  requestNextChunk(c);
  return null;
}

/** Asks for the first incomplete artifact at the bytes received so far, or installs. */
function requestNextChunk(c: Core): void {
  const s = c.transfer.session;
  assert(s !== null && s.manifest !== null, 'transfer: no accepted manifest');
  for (let i = 0; i < s.manifest.length; i++) {
    const len = Number((s.manifest[i] as ManifestEntry).len);
    const got = s.received[i] ?? 0;
    if (got < len) {
      sendDirect(c, s.peer, requestStateChunkFrame(c, s.nonce, i, got, Math.min(len - got, c.config.stateChunkMax)));
      return;
    }
  }
  setStage(c, 'installing');
  c.effects.push({
    kind: 'transfer_install', nonce: s.nonce, manifest: s.manifest, commitOp: s.commitOp, commitMax: s.commitMax,
    journalHead: Math.max(c.op, c.journal.head),
  });
}

function firstIncomplete(s: { manifest: readonly ManifestEntry[] | null; received: number[] }): number {
  const m = s.manifest ?? [];
  for (let i = 0; i < m.length; i++) if ((s.received[i] ?? 0) < Number((m[i] as ManifestEntry).len)) return i;
  return -1;
}

const chunkView = new StateChunkHeaderView();

export function onStateChunk(c: Core, frame: Uint8Array): string | null {
  const h = chunkView.bind(frame, 0);
  const s = c.transfer.session;
  if (s === null || h.nonce !== s.nonce || c.transfer.stage !== 'fetching' || s.manifest === null) {
    return c.drop(Command.StateChunk, h.replica, Drop.TransferNonceMismatch);
  }
  const artifact = h.artifact;
  if (artifact !== firstIncomplete(s)) return c.drop(Command.StateChunk, h.replica, Drop.ChunkNotNextArtifact);
  const offset = h.offsetNumber;
  const got = s.received[artifact] ?? 0;
  const len = Number((s.manifest[artifact] as ManifestEntry).len);
  const bytes = h.body;
  if (offset !== got) return c.drop(Command.StateChunk, h.replica, Drop.ChunkOffsetMismatch);
  if (bytes.length === 0) return c.drop(Command.StateChunk, h.replica, Drop.ChunkEmpty);
  if (offset + bytes.length > len) return c.drop(Command.StateChunk, h.replica, Drop.ChunkOverrunsArtifact);
  c.effects.push({ kind: 'transfer_stage', nonce: s.nonce, artifact, offset, bytes: bytes.slice() });
  s.received[artifact] = got + bytes.length;
  s.idleTicks = 0;
  s.stalledRounds = 0;
  requestNextChunk(c);
  return null;
}

export function onInstallDone(c: Core, done: Extract<Completion, { kind: 'install_done' }>): void {
  const s = c.transfer.session;
  if (s === null || s.nonce !== done.nonce || c.transfer.stage !== 'installing') {
    c.event('state_transfer', 'stale install completion');
    return;
  }
  const peer = s.peer;
  if (!done.ok) {
    if (done.failure === 'install') {
      abandonToRepair(c, peer, `install failed: ${done.reason}`);
      return;
    }
    const key = decodeKey(peer, s.snapshotOp);
    const failures = (c.transfer.decodeFailures.get(key) ?? 0) + 1;
    c.transfer.decodeFailures.set(key, failures);
    setStage(c, 'idle');
    if (failures > DECODE_BUDGET) {
      abandonToRepair(c, peer, `decode budget exhausted for snapshot ${s.snapshotOp}`, true);
      return;
    }
    c.mark(Mark.TransferDecodeFailure, done.failure);
    c.event('state_transfer', `${done.failure} failure (${done.reason}); restarting`);
    startTransfer(c, peer);
    return;
  }
  installed(c, s.commitOp, done.snapshotOp, done.clientTable, done.tableFrontier);
  if (c.plane.checkpoints && done.snapshotOp >= c.sb.checkpointOp) c.sb.checkpointChecksum = done.checkpointChecksum;
  c.transfer.decodeFailures.clear();
  c.transfer.session = null;
  c.transfer.stage = 'idle';
  c.journalIncomplete = false;
  c.votesBlind = false;
  commitWalk(c);
  startRepair(c, peer);
}

/** §6.8 steps 2-5 on the core's side (the host already replaced the state machine). */
function installed(c: Core, commitOp: Op, snapshotOp: Op, table: Extract<Completion, { ok: true }>['clientTable'], frontier: Op): void {
  const ahead = snapshotOp > c.commitMin;
  if (ahead) {
    c.mark(Mark.TransferInstallAhead, `snapshot ${snapshotOp} above commit_min ${c.commitMin}`);
    // The host truncated its WAL above the snapshot; entries we may have acked become faulty.
    const lostTop = Math.max(c.op, c.journal.head);
    c.journal.reset(snapshotOp);
    for (let op = snapshotOp + 1; op <= lostTop; op++) c.journal.faulty.add(op);
    c.sm.truncated(snapshotOp + 1);
    c.commitMin = snapshotOp;
    if (c.op < snapshotOp) c.op = snapshotOp;
    // The log view is unchanged, so its canonical headers above the snapshot still are: kept,
    // this replica's DoViewChange goes on naming them (a faulty slot with a known header).
    // Forgetting them lost the only evidence that an older log view's copy of op 53 was the
    // current log's op 53, and every merge deadlocked on it (seed 1006750 of 3).
    c.journal.untrustAbove(c.commitMin);
    pruneCanon(c);
    if (c.plane.checkpoints) {
      c.sb.checkpointOp = snapshotOp;
    }
  }
  if (table !== null && c.clientTable !== null) {
    c.clientTable.importEntries(table);
    c.transfer.tableFrontier = frontier;
  }
  if (commitOp > c.commitMax) c.commitMax = commitOp;
  if (c.commitMax < c.commitMin) c.commitMax = c.commitMin;
  if (ahead) requestSuperblockWrite(c);
  c.event('state_transfer', `installed snapshot ${snapshotOp} (commit_op ${commitOp}, ahead=${ahead})`);
}

/** Requester stall retry (§6.4 liveness). */
export function tickTransfer(c: Core): void {
  if (c.transfer.cooldown > 0) c.transfer.cooldown -= 1;
  const s = c.transfer.session;
  const stage = c.transfer.stage;
  if (s === null || (stage !== 'awaiting_target' && stage !== 'fetching')) return;
  s.idleTicks += 1;
  if (s.idleTicks < c.config.ticks.repairRetry) return;
  s.idleTicks = 0;
  s.stalledRounds += 1;
  if (s.stalledRounds > STALL_BUDGET) {
    c.mark(Mark.TransferStalled, stage);
    abandonToRepair(c, c.primaryIndex() === c.self ? s.peer : c.primaryIndex(), 'stalled');
    return;
  }
  if (stage === 'awaiting_target') sendDirect(c, s.peer, requestStateTransferFrame(c, s.nonce));
  else requestNextChunk(c);
}

// ---------------------------------------------------------------------------------------------
// Server.

const requestChunkView = new RequestStateChunkHeaderView();
const requestTransferView = new RequestStateTransferHeaderView();

function dropOffer(c: Core, requester: ReplicaIndex): void {
  const offer = c.offers.get(requester);
  if (offer === undefined) return;
  c.offers.delete(requester);
  c.effects.push({ kind: 'transfer_offer_dropped', requester, nonce: offer.nonce });
}

function refuse(c: Core, to: ReplicaIndex, nonce: bigint, transient: boolean): void {
  sendDirect(c, to, stateTransferTargetFrame(c, nonce, c.commitMin, false, transient, new Uint8Array(0)));
}

export function onRequestStateTransfer(c: Core, frame: Uint8Array): string | null {
  const h = requestTransferView.bind(frame, 0);
  const requester = h.replica as ReplicaIndex;
  const nonce = h.nonce;
  const existing = c.offers.get(requester);
  if (existing !== undefined && existing.nonce === nonce) {
    // "First wins": a repeated request is answered from the same offer.
    if (existing.state === 'ready') sendDirect(c, requester, stateTransferTargetFrame(c, nonce, existing.commitOp, true, false, existing.manifest.slice()));
    return null;
  }
  dropOffer(c, requester);
  if (!c.servesStateTransfer()) {
    refuse(c, requester, nonce, false);
    return null;
  }
  c.offers.set(requester, { requester, nonce, state: 'building', entries: [], commitOp: c.commitMin, manifest: new Uint8Array(0), idleTicks: 0, lastByteServed: false });
  const table = c.clientTable === null ? null : encodeClientTable(c.clientTable.exportEntries());
  c.effects.push({ kind: 'transfer_offer', requester, nonce, commitOp: c.commitMin, clientTable: table });
  return null;
}

export function onOfferBuilt(c: Core, done: Extract<Completion, { kind: 'offer_built' }>): void {
  const offer = c.offers.get(done.requester);
  if (offer === undefined || offer.nonce !== done.nonce || offer.state !== 'building') return;
  if (done.entries === null) {
    c.offers.delete(done.requester);
    refuse(c, done.requester, done.nonce, done.transient);
    return;
  }
  offer.entries = done.entries;
  offer.manifest = encodeManifest(done.entries);
  offer.state = 'ready';
  sendDirect(c, done.requester, stateTransferTargetFrame(c, done.nonce, offer.commitOp, true, false, offer.manifest.slice()));
}

export function onRequestStateChunk(c: Core, frame: Uint8Array): string | null {
  const h = requestChunkView.bind(frame, 0);
  const requester = h.replica as ReplicaIndex;
  const offer = c.offers.get(requester);
  if (offer === undefined || offer.nonce !== h.nonce) {
    refuse(c, requester, h.nonce, true);
    return null;
  }
  if (offer.state !== 'ready') return c.drop(Command.RequestStateChunk, requester, Drop.OfferBuilding);
  const entry = offer.entries[h.artifact];
  if (entry === undefined) return c.drop(Command.RequestStateChunk, requester, Drop.ChunkBadArtifact);
  const len = Number(entry.len);
  const offset = h.offsetNumber;
  if (offset >= len) return c.drop(Command.RequestStateChunk, requester, Drop.ChunkPastEnd);
  const n = Math.min(h.len, c.config.stateChunkMax, len - offset);
  c.effects.push({ kind: 'transfer_read', requester, nonce: offer.nonce, artifact: h.artifact, offset, len: n });
  return null;
}

export function onChunkRead(c: Core, done: Extract<Completion, { kind: 'chunk_read' }>): void {
  const offer = c.offers.get(done.requester);
  if (offer === undefined || offer.nonce !== done.nonce || done.bytes === null) return;
  offer.idleTicks = 0;
  const last = offer.entries.length - 1;
  const entry = offer.entries[done.artifact];
  if (entry !== undefined && done.artifact === last && done.offset + done.bytes.length >= Number(entry.len)) offer.lastByteServed = true;
  sendDirect(c, done.requester, stateChunkFrame(c, done.nonce, done.artifact, done.offset, done.bytes));
}

/** Offers expire after 10 retry intervals without a served chunk (3 once fully served). */
export function tickOffers(c: Core): void {
  for (const offer of [...c.offers.values()]) {
    offer.idleTicks += 1;
    const limit = (offer.lastByteServed ? 3 : 10) * c.config.ticks.repairRetry;
    if (offer.idleTicks >= limit) dropOffer(c, offer.requester);
  }
}
