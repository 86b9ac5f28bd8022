/**
 * A shard's read-only copy of the metadata state machine (replication-semantics.md §10: the
 * metadata group runs on its own thread; every shard routes, authorises and answers reads from
 * an identical copy). It is fed by the metadata worker's ring: one `metadata_snapshot` at boot,
 * then every committed op in op order (`metadata_commit`). Applying the same committed ops to
 * the same snapshot gives the same state: the state machine is deterministic.
 *
 * Register commits change nothing here (the client table is the consensus core's) but still
 * advance `appliedOp` (the worker sends them from its `committed` hook, as no state-machine apply
 * reports them); a Logout drops the client from consumer groups, exactly as the metadata
 * worker's own state does.
 *
 * `appliedOp` is the fence used across threads: a request forwarded by another shard carries the
 * op its sender had applied, and the owner acts on it only once its own copy has caught up (so a
 * SendMessages right after the CreateTopic that made its partition finds the partition).
 */
import { assert } from '@shoal/stdx';
import { Operation } from '@shoal/protocol';
import { MetadataState, restoreSnapshot } from '@shoal/state';
import type { MetadataCommitMessage, MetadataSnapshotMessage } from '../channels/messages.js';

export interface MetadataCopyOptions {
  readonly personalAccessTokensPerUserMax: number;
}

export type MetadataChange =
  | { readonly kind: 'snapshot'; readonly op: bigint }
  | { readonly kind: 'commit'; readonly op: bigint; readonly operation: number; readonly client: bigint };

export class MetadataCopy {
  readonly #options: MetadataCopyOptions;
  readonly #listeners: ((change: MetadataChange) => void)[] = [];
  #state: MetadataState | null = null;
  #appliedOp = 0n;

  constructor(options: MetadataCopyOptions) {
    this.#options = options;
  }

  /** False until the first snapshot arrived: the shard serves nothing before. */
  get ready(): boolean {
    return this.#state !== null;
  }

  get state(): MetadataState {
    assert(this.#state !== null, 'metadata copy: no snapshot yet');
    return this.#state;
  }

  get appliedOp(): bigint {
    return this.#appliedOp;
  }

  onChange(listener: (change: MetadataChange) => void): void {
    this.#listeners.push(listener);
  }

  applySnapshot(message: MetadataSnapshotMessage): void {
    const restored = restoreSnapshot(message.snapshot, { personalAccessTokensPerUserMax: this.#options.personalAccessTokensPerUserMax });
    assert(restored.ok, `metadata copy: snapshot does not restore (${restored.ok ? '' : restored.reason})`);
    assert(restored.value.sequenceNumber === message.op, 'metadata copy: snapshot op disagrees with its message');
    this.#state = restored.value.state;
    this.#appliedOp = message.op;
    this.#emit({ kind: 'snapshot', op: message.op });
  }

  applyCommit(message: MetadataCommitMessage): void {
    if (message.op <= this.#appliedOp) return; // already inside the snapshot
    const state = this.state;
    if (message.operation === Operation.Logout) state.logout(message.client);
    else if (message.operation !== Operation.Register) {
      state.apply({
        op: message.op, operation: message.operation, body: message.body, timestamp: message.timestamp,
        userId: message.userId, client: message.client,
      });
    }
    this.#appliedOp = message.op;
    this.#emit({ kind: 'commit', op: message.op, operation: message.operation, client: message.client });
  }

  #emit(change: MetadataChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}
