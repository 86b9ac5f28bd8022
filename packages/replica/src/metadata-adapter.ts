/**
 * The consensus core's StateMachine port over the metadata state machine (`MetadataState`).
 *
 * - `prepare` runs nothing heavy: the host admitted the request already (MetadataHost: admission
 *   with the password hash / token / partition list computed off-thread), so the admitted body
 *   goes into the prepare as is.
 * - `apply` runs `MetadataState.apply` and frames its `{code, payload}` as the committed result
 *   section (every metadata operation that reaches the log is result-framed).
 * - `logout` drops the client from every consumer group.
 *
 * The state machine can be replaced in place by a state-transfer install (`replace`).
 */
import type { JournalSource, Op, PrepareInput, PrepareRecord, PrepareVerdict, StateMachine } from '@shoal/consensus';
import { encodeResultRejection, encodeResultSuccess, isResultFramed } from '@shoal/protocol';
import type { MetadataState } from '@shoal/state';
import type { AppliedOp } from './ports.js';

export interface AdapterEvents {
  applied(op: AppliedOp): void;
  /** A committed Logout (the core's client table owns it; the state machine only drops group memberships). */
  loggedOut(client: bigint): void;
}

export class MetadataAdapter implements StateMachine {
  #state: MetadataState;
  readonly #group: bigint;
  readonly #events: AdapterEvents;

  constructor(state: MetadataState, group: bigint, events: AdapterEvents) {
    this.#state = state;
    this.#group = group;
    this.#events = events;
  }

  get state(): MetadataState {
    return this.#state;
  }

  /** A state-transfer install restored a newer state machine. */
  replace(state: MetadataState): void {
    this.#state = state;
  }

  prepare(input: PrepareInput): PrepareVerdict {
    return { ok: true, operation: input.operation, body: input.body };
  }

  verify(_prepare: PrepareRecord): string | null {
    return null;
  }

  journaled(_prepare: PrepareRecord, _source: JournalSource): void {}

  truncated(_fromOp: Op): void {}

  apply(prepare: PrepareRecord): Uint8Array {
    const outcome = this.#state.apply({
      op: BigInt(prepare.op),
      operation: prepare.operation,
      body: prepare.body,
      timestamp: prepare.timestamp,
      userId: prepare.userId,
      client: prepare.client,
    });
    const payload = outcome.ok ? outcome.payload : new Uint8Array(0);
    this.#events.applied({
      group: this.#group, op: prepare.op, operation: prepare.operation, client: prepare.client, request: prepare.request,
      userId: prepare.userId, timestamp: prepare.timestamp, body: prepare.body, code: outcome.code, payload,
    });
    if (!isResultFramed(prepare.operation, 1)) return payload;
    return outcome.ok ? encodeResultSuccess(payload) : encodeResultRejection(outcome.code);
  }

  logout(client: bigint): void {
    this.#state.logout(client);
    this.#events.loggedOut(client);
  }
}
