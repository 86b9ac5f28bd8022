/**
 * The nemesis's verdict, on every node read separately (a node serves reads from its own copy):
 *
 * - convergence: every node holds the same messages at the same offsets in every partition, and
 *   the same streams (names, topics, partition counts);
 * - the ledger: every acknowledged message at the offset its acknowledgement gave, offsets dense
 *   from 0, no message that was never sent, and no message stored more often than its batch was
 *   sent (a copy per re-sent unknown outcome at most);
 * - metadata: a stream whose create was acknowledged and never deleted exists, a stream whose
 *   delete was acknowledged does not.
 */
import type { TestCluster } from '../../integration/support/cluster.js';
import { readPartition } from '../../integration/support/produce.js';
import type { BatchRecord, Ledger } from './workload.js';

export type PartitionCopy = ReadonlyMap<bigint, string>;

/** Problems listed per check (the report prints the first few). */
const PROBLEMS_KEPT = 25;

export async function readCopies(cluster: TestCluster, id: number, stream: string, topic: string, partitions: number): Promise<PartitionCopy[]> {
  const client = cluster.nodeClient(id, { requestTimeoutMs: 10_000 });
  try {
    const copies: PartitionCopy[] = [];
    for (let p = 0; p < partitions; p++) copies.push(await readPartition(client, stream, topic, p));
    return copies;
  } finally {
    await client.destroy().catch(() => undefined);
  }
}

/**
 * One node's streams as comparable text, sorted: `name id=… created=… topics=[id:name:partitions,…]`
 * (ids and creation times are replicated state too; sizes and counts lag and are left out).
 */
export async function readCatalog(cluster: TestCluster, id: number): Promise<string[]> {
  const client = cluster.nodeClient(id, { requestTimeoutMs: 10_000 });
  try {
    const lines: string[] = [];
    for (const info of await client.stream.list()) {
      const details = await client.stream.get({ streamId: info.name });
      const topics = (details?.topics ?? []).map((t) => `${t.id}:${t.name}:${t.partitionsCount}`).sort();
      lines.push(`${info.name} id=${info.id} created=${info.createdAt} topics=[${topics.join(',')}]`);
    }
    return lines.sort();
  } finally {
    await client.destroy().catch(() => undefined);
  }
}

/** Differences between node copies (node `ids[0]` is the reference). */
export function compareCopies(ids: readonly number[], copies: readonly (readonly PartitionCopy[])[]): string[] {
  const problems: string[] = [];
  const reference = copies[0] ?? [];
  copies.forEach((node, n) => {
    if (n === 0) return;
    reference.forEach((want, p) => {
      const got = node[p] ?? new Map<bigint, string>();
      const offsets = new Set([...want.keys(), ...got.keys()]);
      const first = [...offsets].sort(byBigint).find((o) => want.get(o) !== got.get(o));
      if (first !== undefined) {
        problems.push(`partition ${p}: node ${ids[n]} differs from node ${ids[0]} from offset ${first} ` +
          `(${got.get(first) ?? 'nothing'} vs ${want.get(first) ?? 'nothing'}; sizes ${got.size} vs ${want.size})`);
      }
    });
  });
  return problems.slice(0, PROBLEMS_KEPT);
}

export function compareCatalogs(ids: readonly number[], catalogs: readonly (readonly string[])[]): string[] {
  const want = JSON.stringify(catalogs[0]);
  return catalogs.flatMap((got, n) => (JSON.stringify(got) === want ? [] : [`catalog of node ${ids[n]} differs from node ${ids[0]}: ${JSON.stringify(got)} vs ${want}`]));
}

/** The ledger against one node's copy of one partition. */
export function checkPartitionCopy(node: number, partition: number, copy: PartitionCopy, ledger: Ledger): string[] {
  const problems: string[] = [];
  const batchOf = new Map<string, BatchRecord>();
  for (const batch of ledger.batches) if (batch.partition === partition) for (const payload of batch.payloads) batchOf.set(payload, batch);
  for (const batch of ledger.batches) {
    if (batch.partition !== partition || batch.ackedAt === null) continue;
    batch.payloads.forEach((payload, i) => {
      const offset = (batch.ackedAt as bigint) + BigInt(i);
      const got = copy.get(offset);
      if (got !== payload) problems.push(`node ${node} p${partition} offset ${offset}: acknowledged ${payload}, holds ${got ?? 'nothing'}`);
    });
  }
  const copiesOf = new Map<string, number>();
  let expected = 0n;
  for (const offset of [...copy.keys()].sort(byBigint)) {
    if (offset !== expected) problems.push(`node ${node} p${partition}: offset ${offset} where ${expected} was expected (gap)`);
    expected = offset + 1n;
    const payload = copy.get(offset) as string;
    const batch = batchOf.get(payload);
    if (batch === undefined) {
      problems.push(`node ${node} p${partition} offset ${offset}: ${payload} was never sent to this partition`);
      continue;
    }
    const count = (copiesOf.get(payload) ?? 0) + 1;
    copiesOf.set(payload, count);
    if (count > batch.attempts) problems.push(`node ${node} p${partition}: ${payload} stored ${count} times, sent ${batch.attempts}`);
  }
  return problems.slice(0, PROBLEMS_KEPT);
}

/** The metadata ledger against one node's catalog (`fixed`: streams the run made up front). */
export function checkCatalog(node: number, catalog: readonly string[], ledger: Ledger, fixed: readonly string[]): string[] {
  const problems: string[] = [];
  const names = new Set(catalog.map((line) => line.slice(0, line.indexOf(' '))));
  for (const record of ledger.streams.values()) {
    const present = names.has(record.name);
    if (record.create === 'acked' && record.delete === 'none' && !present) problems.push(`node ${node}: acknowledged stream ${record.name} is missing`);
    if (record.delete === 'acked' && present) problems.push(`node ${node}: stream ${record.name} whose delete was acknowledged exists`);
  }
  for (const name of names) if (!ledger.streams.has(name) && !fixed.includes(name)) problems.push(`node ${node}: stream ${name} was never created`);
  return problems.slice(0, PROBLEMS_KEPT);
}

function byBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
