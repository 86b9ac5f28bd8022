/**
 * Requester-side staging of a state transfer, shared by both planes.
 *
 * The core hands the driver received chunks (`transfer_stage`) without the manifest; storage's
 * installers need the manifest up front (they reserve one staging file per artifact). So the
 * driver remembers the manifest of every StateTransferTarget it sees (by nonce, bounded) and opens
 * the installer on the first chunk of that nonce; `transfer_install` then checks that the core's
 * manifest is the one the installer staged against. Chunk rules (§6.4 step 7) are the core's and
 * the installer's: a chunk the installer refuses marks the transfer broken (the install then
 * fails with `verify`, which restarts the transfer).
 *
 *   StateTransferTarget ──▶ remember(nonce → manifest)
 *   transfer_stage ──────▶ installer(nonce) ??= open(manifest).begin() ──▶ chunk()
 *   transfer_discard ────▶ abort()
 *   transfer_install ────▶ take(nonce): the installer, complete and unbroken, or a reason
 */
import { type ManifestEntry, StateTransferTargetHeaderView, decodeManifest, validateHeader } from '@shoal/protocol';

/** The part of storage's Metadata/PartitionInstaller the staging uses. */
export interface StagingInstaller {
  readonly complete: boolean;
  chunk(artifact: number, offset: number, bytes: Uint8Array): { readonly ok: boolean; readonly value?: string; readonly error?: unknown };
  abort(): unknown;
}

/** Manifests remembered at once (a requester has one transfer; retries use fresh nonces). */
const REMEMBERED_MAX = 8;
const STATE_TRANSFER_TARGET = 23;

interface Remembered {
  readonly entries: readonly ManifestEntry[];
  readonly commitOp: number;
}

interface Open<I> {
  readonly installer: I;
  readonly entries: readonly ManifestEntry[];
  broken: string | null;
}

export function sameManifest(a: readonly ManifestEntry[], b: readonly ManifestEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as ManifestEntry;
    const y = b[i] as ManifestEntry;
    if (x.kind !== y.kind || x.frontier !== y.frontier || x.len !== y.len || x.checksum !== y.checksum) return false;
  }
  return true;
}

export class TransferStaging<I extends StagingInstaller> {
  readonly #remembered = new Map<bigint, Remembered>();
  readonly #open = new Map<bigint, Open<I>>();
  readonly #create: (entries: readonly ManifestEntry[], commitOp: number) => { installer: I } | { reason: string };
  readonly #view = new StateTransferTargetHeaderView();
  readonly #messageSizeMax: number;

  constructor(messageSizeMax: number, create: (entries: readonly ManifestEntry[], commitOp: number) => { installer: I } | { reason: string }) {
    this.#messageSizeMax = messageSizeMax;
    this.#create = create;
  }

  /**
   * Sees an inbound frame: remembers the manifest of an available StateTransferTarget.
   * `validated`: the host's link already ran `validateHeader` on it (consensus ingress.ts).
   */
  observe(frame: Uint8Array, validated = false): void {
    if (frame.length < 256 || frame[60] !== STATE_TRANSFER_TARGET) return;
    if (!validated && validateHeader(frame, 0, { messageSizeMax: this.#messageSizeMax }) !== null) return;
    const h = this.#view.bind(frame, 0);
    if (h.available === 0) return;
    const manifest = decodeManifest(h.body);
    if (!manifest.ok) return;
    if (this.#remembered.size >= REMEMBERED_MAX) {
      const oldest = this.#remembered.keys().next().value;
      if (oldest !== undefined) this.#remembered.delete(oldest);
    }
    this.#remembered.set(h.nonce, { entries: manifest.value.entries, commitOp: h.commitOpNumber });
  }

  /** Stages one accepted chunk. */
  stage(nonce: bigint, artifact: number, offset: number, bytes: Uint8Array): void {
    const open = this.#openFor(nonce, null);
    if (open === null || open.broken !== null) return;
    const verdict = open.installer.chunk(artifact, offset, bytes);
    if (!verdict.ok) open.broken = 'stage_io';
    else if (verdict.value !== 'accepted') open.broken = `chunk_${verdict.value ?? 'refused'}`;
  }

  /** Drops everything staged under `nonce`. */
  discard(nonce: bigint): void {
    const open = this.#open.get(nonce);
    this.#open.delete(nonce);
    this.#remembered.delete(nonce);
    open?.installer.abort();
  }

  /**
   * The installer for `nonce`, complete and staged against `manifest`, or the reason it cannot
   * install (the staging is then aborted). The caller owns the installer afterwards.
   */
  take(nonce: bigint, manifest: readonly ManifestEntry[], commitOp: number): { installer: I } | { reason: string } {
    const open = this.#openFor(nonce, { entries: manifest, commitOp });
    this.#open.delete(nonce);
    this.#remembered.delete(nonce);
    if (open === null) return { reason: 'staging_unavailable' };
    const problem = open.broken ?? (!sameManifest(open.entries, manifest) ? 'manifest_changed' : !open.installer.complete ? 'artifacts_incomplete' : null);
    if (problem !== null) {
      open.installer.abort();
      return { reason: problem };
    }
    return { installer: open.installer };
  }

  /** Aborts every open staging (shutdown). */
  abortAll(): void {
    for (const open of this.#open.values()) open.installer.abort();
    this.#open.clear();
    this.#remembered.clear();
  }

  #openFor(nonce: bigint, fallback: Remembered | null): Open<I> | null {
    const existing = this.#open.get(nonce);
    if (existing !== undefined) return existing;
    const known = this.#remembered.get(nonce) ?? fallback;
    if (known === null) return null;
    const created = this.#create(known.entries, known.commitOp);
    const open: Open<I> = 'installer' in created
      ? { installer: created.installer, entries: known.entries, broken: null }
      : { installer: nullInstaller() as I, entries: known.entries, broken: created.reason };
    this.#open.set(nonce, open);
    return open;
  }
}

function nullInstaller(): StagingInstaller {
  return { complete: false, chunk: () => ({ ok: true, value: 'refused' }), abort: () => undefined };
}
