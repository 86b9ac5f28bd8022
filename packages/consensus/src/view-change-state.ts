/**
 * View-change records: the DoViewChange votes a primary-elect collects (copied out of the frame,
 * which the host may reuse) and the merged log it parks until every body is present.
 */
import { DoViewChangeHeaderView, decodeSuffix, PrepareHeaderView } from '@shoal/protocol';
import type { Op } from './types.js';

/** One suffix entry of a DoViewChange (entry i holds op = dvc.op - i). */
export interface DvcEntry {
  readonly op: Op;
  readonly blank: boolean;
  readonly checksum: bigint;
  readonly parent: bigint;
  /** The prepare header's own `commit` field. */
  readonly commit: Op;
  readonly timestamp: bigint;
  /**
   * The prepare header's `view`: the stamp of this copy, the view whose primary last sent it (its
   * log held the op then). 0 for a blank.
   */
  readonly view: number;
  readonly nack: boolean;
  readonly present: boolean;
  /** The 256 header bytes (a copy). */
  readonly header: Uint8Array;
}

export interface DvcRecord {
  readonly replica: number;
  readonly logView: number;
  readonly op: Op;
  readonly commit: Op;
  readonly entries: readonly DvcEntry[];
}

/** The merge's Ready outcome, parked by the primary-elect until its journal covers it (§5.5-5.6). */
export interface ParkedLog {
  readonly opHead: Op;
  readonly commitMax: Op;
  /** Canonical headers from opHead down to max(commitMax, 1). */
  readonly headers: readonly DvcEntry[];
  readonly committedElsewhere: readonly DvcEntry[];
  /** The DVCs the log was merged from (body sources: present bits). */
  readonly sources: readonly DvcRecord[];
}

export interface ViewChangeState {
  /** Replicas whose StartViewChange for the current view we hold (bitmask, self included). */
  svcFrom: number;
  /** First DoViewChange per replica in the current view. */
  readonly dvcs: Map<number, DvcRecord>;
  sentSvc: boolean;
  sentDvc: boolean;
  /** The merge reached Ready in this view ("view decided" latch). */
  decided: boolean;
  parked: ParkedLog | null;
  /** Body-source rotation for the primary-elect's repair. */
  repairAttempts: number;
  /** This replica withheld its DoViewChange in this view (an incomplete journal; marked once). */
  abstained: boolean;
}

export function newViewChangeState(): ViewChangeState {
  return { svcFrom: 0, dvcs: new Map(), sentSvc: false, sentDvc: false, decided: false, parked: null, repairAttempts: 0, abstained: false };
}

const prepareView = new PrepareHeaderView();
const dvcView = new DoViewChangeHeaderView();

/** Copies the entries of a suffix body out of a (validated) DoViewChange or StartView frame. */
export function suffixEntries(frame: Uint8Array): DvcEntry[] | string {
  const decoded = decodeSuffix(frame, 0);
  if (!decoded.ok) return decoded.reason;
  return decoded.value.map((e) => {
    const header = e.header.slice();
    const h = prepareView.bind(header, 0);
    return {
      op: Number(e.op),
      blank: e.blank,
      checksum: e.blank ? 0n : h.checksum,
      parent: e.blank ? 0n : h.parent,
      commit: e.blank ? 0 : h.commitNumber,
      timestamp: e.blank ? 0n : h.timestamp,
      view: e.blank ? 0 : h.view,
      nack: e.nack,
      present: e.present,
      header,
    };
  });
}

export function dvcRecordFromFrame(frame: Uint8Array): DvcRecord | string {
  const entries = suffixEntries(frame);
  if (typeof entries === 'string') return entries;
  const h = dvcView.bind(frame, 0);
  return { replica: h.replica, logView: h.logView, op: h.opNumber, commit: h.commitNumber, entries };
}
