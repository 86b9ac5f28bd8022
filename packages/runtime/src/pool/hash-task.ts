/**
 * The piscina task module (loaded by the pool's own worker threads from dist/pool/hash-task.js):
 * CPU-heavy, latency-tolerant work off the shard and metadata threads.
 */
import { hashPassword, verifyPassword } from './password-hash.js';

export type HashTask =
  | { readonly op: 'hash'; readonly password: string }
  | { readonly op: 'verify'; readonly password: string; readonly hash: string };

export type HashTaskResult = { readonly op: 'hash'; readonly hash: string } | { readonly op: 'verify'; readonly ok: boolean };

export default function run(task: HashTask): HashTaskResult {
  if (task.op === 'hash') return { op: 'hash', hash: hashPassword(task.password) };
  return { op: 'verify', ok: verifyPassword(task.password, task.hash) };
}
