/**
 * The ack oracle: a replica never nacks, in a DoViewChange, an op it acknowledged whose
 * acknowledged copy was committed before that DoViewChange's view (issue 12's "no restarted
 * replica nacks what it acknowledged"). The committed-prefix checker sees a loss only once a later
 * view commits other contents at that op; this sees the vote that makes the loss possible,
 * whatever the merge then does with it (c51cc79's boot rule, which dropped acked ops, ran in 39
 * seeds of a sweep without a failure).
 *
 *   acked      every PrepareOk a replica sends before the op is committed anywhere: (group
 *              history, op, prepare checksum), for all time (crashes do not erase what the
 *              replica promised)
 *   voted      every DoViewChange it sends: the ops above its commit point it nacks, explicitly
 *              (the nack bit) or by omission (its log ends below, when it knows where its log
 *              ends: not a blank head without a nack bit, which is how a blind vote or a lost
 *              tail says so)
 *   committed  every commit event, with the committing replica's view then
 *
 * A nacked op whose copy this replica acked is a suspect. A suspect is a violation when that copy
 * was committed by a replica in a view below the vote's view: its commit quorum formed in a view
 * at or below that one, so the vote's merge had to keep it, and an acker's nack counts against
 * it. Not when it is first seen committed in the vote's view or later: a nack of an op that a
 * merge had proved uncommitted is sound even if a later view commits the same op again (seed
 * 1006789 of 5: a primary-elect truncated its acked op 24 on a nack quorum, its view change
 * failed, it nacked 24 in the next view, and that view committed 24 from another copy). Suspects
 * wait for the final checks, because the commit can be seen after the vote.
 */
import { METADATA_GROUP_ID, type DvcRecord } from '@shoal/consensus';

export interface Suspect {
  readonly node: number;
  readonly key: bigint;
  readonly op: number;
  readonly checksum: bigint;
  /** The DoViewChange's view and how it nacked the op. */
  readonly view: number;
  readonly how: 'nack bit' | 'log ends below';
}

export class AckOracle {
  /** Per node, per group history: op → every prepare checksum the node acked there. */
  readonly #acked: Map<bigint, Map<number, bigint[]>>[];
  readonly #suspects: Suspect[] = [];
  /** Index into `#suspects` by (node, group, op, checksum): a vote repeated keeps its highest view. */
  readonly #seen = new Map<string, number>();
  /** Per group history: op → the committed checksum and the lowest view a replica committed it in. */
  readonly #commits = new Map<bigint, Map<number, { checksum: bigint; view: number | null }>>();
  /** DoViewChanges examined with at least one acked op above their commit point (coverage). */
  votesWithAcks = 0;

  constructor(replicas: number) {
    this.#acked = Array.from({ length: replicas }, () => new Map());
  }

  acked(node: number, key: bigint, op: number, checksum: bigint): void {
    // An ack sent once the op is committed somewhere was no part of its commit quorum (the primary
    // commits in the step its quorum's acks arrive), and a nack by a replica outside every commit
    // quorum cannot make a nack quorum with the others (n − quorum < the nack quorum): seed
    // 1003520 of 3, a lagging backup acked a retransmit of committed op 130 after repairing it,
    // then voted with its log head at the hole below.
    if (this.#commits.get(key)?.has(op) === true) return;
    const byKey = this.#acked[node] as Map<bigint, Map<number, bigint[]>>;
    let ops = byKey.get(key);
    if (ops === undefined) byKey.set(key, (ops = new Map()));
    const list = ops.get(op);
    if (list === undefined) ops.set(op, [checksum]);
    else if (!list.includes(checksum)) list.push(checksum);
  }

  /** A DoViewChange `node` sent in `view`: records the acked ops it nacks. */
  voted(node: number, key: bigint, view: number, dvc: DvcRecord): void {
    const ops = (this.#acked[node] as Map<bigint, Map<number, bigint[]>>).get(key);
    if (ops === undefined) return;
    const head = dvc.entries[0];
    const logEndKnown = !(head !== undefined && head.blank && !head.nack && dvc.op > dvc.commit);
    let examined = false;
    for (const [op, checksums] of ops) {
      if (op <= dvc.commit) continue;
      examined = true;
      let how: Suspect['how'] | null = null;
      if (op > dvc.op) how = logEndKnown ? 'log ends below' : null;
      else {
        const entry = dvc.entries[dvc.op - op];
        if (entry !== undefined && entry.nack) how = 'nack bit';
      }
      if (how === null) continue;
      for (const checksum of checksums) {
        // A later view's vote that nacks it again is the stricter test (commit view below it).
        const id = `${node}:${key}:${op}:${checksum}`;
        const at = this.#seen.get(id);
        if (at === undefined) {
          this.#seen.set(id, this.#suspects.length);
          this.#suspects.push({ node, key, op, checksum, view, how });
        } else if (view > (this.#suspects[at] as Suspect).view) this.#suspects[at] = { node, key, op, checksum, view, how };
      }
    }
    if (examined) this.votesWithAcks++;
  }

  /** A replica committed `op` with `checksum` while in `view` (null: not known, a boot's replay). */
  committed(key: bigint, op: number, checksum: bigint, view: number | null): void {
    let ops = this.#commits.get(key);
    if (ops === undefined) this.#commits.set(key, (ops = new Map()));
    const seen = ops.get(op);
    if (seen === undefined) ops.set(op, { checksum, view });
    else if (view !== null && (seen.view === null || view < seen.view)) seen.view = view;
  }

  /** The first suspect whose acked copy was committed in a view below its vote's, as a message; else null. */
  check(): string | null {
    for (const s of this.#suspects) {
      const c = this.#commits.get(s.key)?.get(s.op);
      if (c === undefined || c.checksum !== s.checksum || c.view === null || c.view >= s.view) continue;
      const group = s.key === METADATA_GROUP_ID ? 'metadata' : `group ${s.key.toString(16)}`;
      return `replica ${s.node} ${group}: its DoViewChange in view ${s.view} nacked op ${s.op} (${s.how}), which it had acknowledged with the checksum committed there in view ${c.view}`;
    }
    return null;
  }
}
