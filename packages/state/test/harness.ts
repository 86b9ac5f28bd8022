import {
  type Identifier, Operation, type Permissions, createStreamCommand, createTopicCommand, createUserCommand, numericIdentifier,
  parseResultSection,
} from '@shoal/protocol';
import {
  type AdmitHostInputs, type AdmitResult, MetadataState, type Outcome, admit, buildRootUserCreateBody, hostWorkFor,
} from '../src/index.js';

/** A deterministic stand-in for the host: hashes are '$test$' + password, tokens are counters. */
export const fakeHash = (password: string): string => `$test$${password}`;

export interface Step {
  readonly admitted: AdmitResult;
  readonly outcome: Outcome | null;
}

/**
 * Drives one MetadataState the way the consensus core and host would: admission with the host's
 * work done synchronously, then apply at the next op with a strictly increasing timestamp.
 */
export class Harness {
  readonly state: MetadataState;
  op = 0n;
  timestamp = 1_700_000_000_000_000n;
  #tokens = 0;

  constructor(state = new MetadataState()) {
    this.state = state;
  }

  /** Boots the root user (id 0) through the committed bootstrap op. */
  static withRoot(username = 'iggy', password = 'iggy'): Harness {
    const h = new Harness();
    const { operation, body } = buildRootUserCreateBody(username, fakeHash(password));
    const out = h.apply(operation, body, 0, 0n);
    if (!out.ok) throw new Error(`root bootstrap failed: ${out.code}`);
    return h;
  }

  apply(operation: number, body: Uint8Array, userId: number, client: bigint): Outcome {
    this.op += 1n;
    this.timestamp += 1_000n;
    return this.state.apply({ op: this.op, operation, body, timestamp: this.timestamp, userId, client });
  }

  hostInputs(operation: number, body: Uint8Array, extra: AdmitHostInputs = {}): AdmitHostInputs {
    const work = hostWorkFor(this.state, operation, body);
    switch (work.kind) {
      case 'hash_password': return { passwordHash: fakeHash(work.password), ...extra };
      case 'verify_and_hash':
        return { passwordHash: fakeHash(work.newPassword), currentPasswordMatches: fakeHash(work.currentPassword) === work.storedHash, ...extra };
      case 'generate_token': return { token: `tok-${++this.#tokens}-${this.op}`, ...extra };
      default: return extra;
    }
  }

  /** Admission, then (when proposed) apply. */
  run(operation: number, body: Uint8Array, userId = 0, client = 1n, extra: AdmitHostInputs = {}): Step {
    const admitted = admit(this.state, {
      operation, body, actor: { userId }, client, timestamp: this.timestamp, host: this.hostInputs(operation, body, extra),
    });
    if (admitted.kind !== 'propose') return { admitted, outcome: null };
    return { admitted, outcome: this.apply(admitted.operation, admitted.body, userId, client) };
  }

  /** The code a client sees: the admission status, or the committed result. */
  code(operation: number, body: Uint8Array, userId = 0, client = 1n, extra: AdmitHostInputs = {}): number {
    const step = this.run(operation, body, userId, client, extra);
    if (step.admitted.kind === 'reject') return step.admitted.status;
    if (step.admitted.kind === 'evict') return -1;
    return (step.outcome as Outcome).code;
  }

  createStream(name: string, userId = 0): number {
    const out = this.run(Operation.CreateStream, createStreamCommand.encodeRequest({ name, options: [] }), userId).outcome;
    if (out === null || !out.ok) throw new Error(`create stream ${name} failed`);
    const d = createStreamCommand.decodeResponse(out.payload);
    if (!d.ok) throw new Error(d.reason);
    return d.value.id;
  }

  createTopic(stream: number | Identifier, name: string, partitionsCount = 1, userId = 0): number {
    const streamId = typeof stream === 'number' ? numericIdentifier(stream) : stream;
    const out = this.run(Operation.CreateTopic, createTopicCommand.encodeRequest({ streamId, partitionsCount, name, options: [] }), userId).outcome;
    if (out === null || !out.ok) throw new Error(`create topic ${name} failed`);
    const d = createTopicCommand.decodeResponse(out.payload);
    if (!d.ok) throw new Error(d.reason);
    return d.value.id;
  }

  createUser(username: string, permissions: Permissions | null, password = 'secret'): number {
    const out = this.run(Operation.CreateUser, createUserCommand.encodeRequest({ username, password, status: 1, permissions, options: [] })).outcome;
    if (out === null || !out.ok) throw new Error(`create user ${username} failed: ${out?.code}`);
    const d = createUserCommand.decodeResponse(out.payload);
    if (!d.ok) throw new Error(d.reason);
    return d.value.id;
  }
}

export const id = numericIdentifier;

export const NO_GLOBAL: Permissions['global'] = {
  manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false,
  readStreams: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false,
};

export function globalOnly(grants: Partial<Permissions['global']>): Permissions {
  return { global: { ...NO_GLOBAL, ...grants }, streams: [] };
}

/** Result-framed reply body as the core would build it (for golden comparisons). */
export function framed(out: Outcome): Uint8Array {
  const count = out.ok ? 0 : 1;
  const payload = out.ok ? out.payload : new Uint8Array(0);
  const body = new Uint8Array(4 + (count ? 8 : 0) + payload.length);
  const v = new DataView(body.buffer);
  v.setUint32(0, count, true);
  if (!out.ok) v.setUint32(8, out.code, true);
  body.set(payload, 4 + (count ? 8 : 0));
  const parsed = parseResultSection(body);
  if (!parsed.ok) throw new Error(parsed.reason);
  return body;
}
