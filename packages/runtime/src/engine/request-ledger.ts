/**
 * Which client request a reply from a consensus core answers, on the thread that owns the group.
 *
 * The core builds a committed reply from the PREPARE header: its `operation` is the proposed
 * one (64 for a CreateTopic) and its `timestamp` the prepare's, while a client correlates replies
 * by the `operation` and `timestamp` it sent (framing.mdx). The owner therefore records every
 * request it submits and patches the reply to echo them. Entries are kept per connection token
 * and matched by (group, request number), oldest first: partition requests all carry the client's
 * current counter value, and one group commits them in submission order, so FIFO among equal
 * numbers is the submission order.
 *
 *   submit  ─ record(token, group, request fields) ─ core.onRequest
 *   'dropped' outcome ─ forget(...)                 (the request ends without an answer)
 *   reply   ─ match(token, group, frame) ─ echo patch ─ to the connection's shard   (metadata worker)
 *   reply   ─ settle(token, group, frame) ─ no patch: the core echoed             (partition host)
 *
 * An eviction answers the oldest request of that group (it carries no request number). A reply
 * nobody recorded (a cached duplicate for a request this node never saw) passes unpatched and
 * releases nothing.
 *
 * DeleteSegments (138) is proposed as 68 TruncatePartition, whose committed reply is
 * result-framed; a 138 reply is not (wire-client-framing.md), so its outcome moves to the header
 * `status` and the body is dropped.
 */
import { ClientCommand, COMMAND_OFFSET, FRAME_HEADER_SIZE, FRAME_SIZE_OFFSET, Operation, REPLY_HEADER, parseResultSection } from '@shoal/protocol';

interface Entry {
  readonly group: bigint;
  readonly request: bigint;
  readonly operation: number;
  readonly timestamp: bigint;
  readonly client: bigint;
  readonly requestChecksum: bigint;
  /** `performance.now()` when it was recorded (commit latency); 0 when the caller gave none. */
  readonly recordedMs: number;
}

/** A request taken back from the ledger (its group's core will not answer it). */
export interface PendingRequest extends Entry {
  readonly token: number;
}

export interface MatchedReply {
  readonly frame: Uint8Array;
  /** The reply answers a recorded request: the connection's in-flight slot is released. */
  readonly completes: boolean;
  /** When the answered request was recorded (`record`'s `nowMs`); -1 when none matched. */
  readonly recordedMs: number;
}

const REQUEST_AT = REPLY_HEADER.request.offset;
const STATUS_AT = REPLY_HEADER.status.offset;
const OPERATION_AT = REPLY_HEADER.operation.offset;
const TIMESTAMP_AT = REPLY_HEADER.timestamp.offset;

export class RequestLedger {
  readonly #byToken = new Map<number, Entry[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  record(token: number, group: bigint, request: { readonly request: bigint; readonly operation: number; readonly timestamp: bigint; readonly client: bigint; readonly requestChecksum: bigint }, nowMs = 0): void {
    let entries = this.#byToken.get(token);
    if (entries === undefined) {
      entries = [];
      this.#byToken.set(token, entries);
    }
    entries.push({
      group, request: request.request, operation: request.operation, timestamp: request.timestamp, client: request.client,
      requestChecksum: request.requestChecksum, recordedMs: nowMs,
    });
    this.#size += 1;
  }

  /**
   * Removes and returns every request recorded for `group`: its replica stopped being the
   * acting primary, whose core drops the requests it had not committed without answering them.
   */
  takeGroup(group: bigint): PendingRequest[] {
    const taken: PendingRequest[] = [];
    for (const [token, entries] of [...this.#byToken]) {
      for (let i = entries.length - 1; i >= 0; i--) {
        const e = entries[i] as Entry;
        if (e.group !== group) continue;
        taken.push({ ...e, token });
        this.#remove(token, entries, i);
      }
    }
    return taken.reverse();
  }

  /** Drops the newest entry recorded for (token, group, request): the core dropped it. */
  forget(token: number, group: bigint, request: bigint): void {
    const entries = this.#byToken.get(token);
    if (entries === undefined) return;
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i] as Entry;
      if (e.group === group && e.request === request) {
        this.#remove(token, entries, i);
        return;
      }
    }
  }

  /**
   * Finds the request `frame` answers and removes the entry, without touching the frame: the
   * partition plane, whose core echoes each request's own fields in its replies. `completes`
   * false: nothing recorded matches.
   */
  settle(token: number, group: bigint, frame: Uint8Array): Omit<MatchedReply, 'frame'> {
    const entries = this.#byToken.get(token);
    if (entries === undefined) return { completes: false, recordedMs: -1 };
    const index = this.#indexOf(entries, group, frame);
    if (index < 0) return { completes: false, recordedMs: -1 };
    const entry = entries[index] as Entry;
    this.#remove(token, entries, index);
    return { completes: true, recordedMs: entry.recordedMs };
  }

  /** The oldest entry of `group` an eviction answers, or the one with the reply's request number. */
  #indexOf(entries: readonly Entry[], group: bigint, frame: Uint8Array): number {
    if (frame[COMMAND_OFFSET] === ClientCommand.Eviction) return entries.findIndex((e) => e.group === group);
    const request = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(REQUEST_AT, true);
    return entries.findIndex((e) => e.group === group && e.request === request);
  }

  /** Finds the request `frame` answers, patches the echo fields, and removes the entry. */
  match(token: number, group: bigint, frame: Uint8Array): MatchedReply {
    const entries = this.#byToken.get(token);
    if (entries === undefined) return { frame, completes: false, recordedMs: -1 };
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const command = frame[COMMAND_OFFSET];
    if (command === ClientCommand.Eviction) {
      const index = entries.findIndex((e) => e.group === group);
      if (index < 0) return { frame, completes: false, recordedMs: -1 };
      const evicted = entries[index] as Entry;
      this.#remove(token, entries, index);
      return { frame, completes: true, recordedMs: evicted.recordedMs };
    }
    const request = view.getBigUint64(REQUEST_AT, true);
    const index = entries.findIndex((e) => e.group === group && e.request === request);
    if (index < 0) return { frame, completes: false, recordedMs: -1 };
    const entry = entries[index] as Entry;
    this.#remove(token, entries, index);
    // A copy: the core may keep the frame it handed out (its reply cache).
    const patched = entry.operation === Operation.DeleteSegments ? statusOnly(frame) : frame.slice();
    const out = new DataView(patched.buffer);
    out.setUint8(OPERATION_AT, entry.operation);
    out.setBigUint64(TIMESTAMP_AT, entry.timestamp, true);
    return { frame: patched, completes: true, recordedMs: entry.recordedMs };
  }

  #remove(token: number, entries: Entry[], index: number): void {
    entries.splice(index, 1);
    this.#size -= 1;
    if (entries.length === 0) this.#byToken.delete(token);
  }
}

/** A result-framed reply turned into a header-status reply with no body (see DeleteSegments above). */
function statusOnly(frame: Uint8Array): Uint8Array {
  const out = frame.slice(0, FRAME_HEADER_SIZE);
  const view = new DataView(out.buffer);
  const section = parseResultSection(frame.subarray(FRAME_HEADER_SIZE));
  const code = section.ok ? section.value.code : view.getUint32(STATUS_AT, true);
  view.setUint32(FRAME_SIZE_OFFSET, FRAME_HEADER_SIZE, true);
  view.setUint32(STATUS_AT, code, true);
  return out;
}
