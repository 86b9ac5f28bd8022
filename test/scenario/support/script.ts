/** Helpers that keep the scenario scripts short. */
import { expect } from 'vitest';
import { type Cluster, text } from './cluster.js';

/** Logs client `client` in through `node` and returns its session epoch. */
export function login(cluster: Cluster, node: number, client: bigint, userId = 7): bigint {
  const token = cluster.session(node, 'register', client, userId);
  cluster.runUntil(() => cluster.sessionResults.some((r) => r.token === token), 2000);
  const result = cluster.sessionResults.find((r) => r.token === token);
  expect(result?.outcome).toBe('ok');
  return result?.epoch ?? 0n;
}

/**
 * Sends `count` put requests from `client` to `node`, one at a time (a client has at most one
 * request in flight), request numbers from `first`, waiting for each reply.
 */
export function puts(cluster: Cluster, node: number, client: bigint, epoch: bigint, first: bigint, count: number): number[] {
  const tokens: number[] = [];
  for (let i = 0; i < count; i++) {
    const request = first + BigInt(i);
    const { token } = cluster.request(node, { client, request, session: epoch, body: text.encode(`k${request}=v${request}`) });
    tokens.push(token);
    cluster.runUntil(() => cluster.answersFor(token).length > 0, 2000);
  }
  return tokens;
}

export function replyOp(frame: Uint8Array): bigint {
  return new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getBigUint64(176, true);
}
