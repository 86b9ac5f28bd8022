/**
 * The ack oracle: a replica never nacks, in a DoViewChange, an op it acknowledged whose
 * acknowledged copy is the committed one (issue 12's "no restarted replica nacks what it
 * acknowledged"). The committed-prefix checker sees a loss only once a later view commits other
 * contents at that op; this sees the vote that makes the loss possible, whatever the merge then
 * does with it (a DoViewChange that nacked a committed op c51cc79 dropped at boot ran in 37 seeds
 * of a sweep without a failure).
 *
 *   acked   every PrepareOk a replica sends: (group history, op, prepare checksum), for all time
 *           (crashes do not erase what the replica promised)
 *   voted   every DoViewChange it sends: the ops above its commit point it nacks, explicitly (the
 *           nack bit) or by omission (its log ends below, when it knows where its log ends: not
 *           a blank head without a nack bit, which is how a blind vote or a lost tail says so)
 *
 * A nacked op whose copy this replica acked is a suspect; a suspect whose acked copy is the
 * committed op is a violation. Suspects wait for the final checks, because an op can commit after
 * the vote.
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

/** The committed checksum of `op` in the group history `key`, or null when nothing committed it yet. */
export type CommittedLookup = (key: bigint, op: number) => bigint | null;

export class AckOracle {
  /** Per node, per group history: op → every prepare checksum the node acked there. */
  readonly #acked: Map<bigint, Map<number, bigint[]>>[];
  readonly #suspects: Suspect[] = [];
  /** Retransmitted DoViewChanges repeat their suspects: each is kept once. */
  readonly #seen = new Set<string>();
  /** DoViewChanges examined with at least one acked op above their commit point (coverage). */
  votesWithAcks = 0;

  constructor(replicas: number) {
    this.#acked = Array.from({ length: replicas }, () => new Map());
  }

  acked(node: number, key: bigint, op: number, checksum: bigint): void {
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
        const id = `${node}:${key}:${op}:${checksum}`;
        if (this.#seen.has(id)) continue;
        this.#seen.add(id);
        this.#suspects.push({ node, key, op, checksum, view, how });
      }
    }
    if (examined) this.votesWithAcks++;
  }

  /** The first suspect whose acked copy is the committed op, as a message; else null. */
  check(committed: CommittedLookup): string | null {
    for (const s of this.#suspects) {
      if (committed(s.key, s.op) !== s.checksum) continue;
      const group = s.key === METADATA_GROUP_ID ? 'metadata' : `group ${s.key.toString(16)}`;
      return `replica ${s.node} ${group}: its DoViewChange in view ${s.view} nacked op ${s.op} (${s.how}), which it had acknowledged with the committed checksum ${s.checksum.toString(16)}`;
    }
    return null;
  }
}
