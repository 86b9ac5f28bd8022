/**
 * The dashboard's tables, rebuilt from one /api/v1/cluster answer. Every name (streams, topics,
 * groups) is user data: it only ever goes into `textContent`, never into markup.
 */
import type { ClusterJson, ClusterNodeJson, ConsumerGroupJson, PartitionJson } from './api.js';

type Cell = string | { readonly text: string; readonly className?: string; readonly title?: string };

function row(cells: readonly Cell[], data: Readonly<Record<string, string>> = {}): HTMLTableRowElement {
  const tr = document.createElement('tr');
  for (const [key, value] of Object.entries(data)) tr.dataset[key] = value;
  for (const cell of cells) {
    const td = document.createElement('td');
    if (typeof cell === 'string') {
      td.textContent = cell;
    } else {
      td.textContent = cell.text;
      if (cell.className !== undefined) td.className = cell.className;
      if (cell.title !== undefined) td.title = cell.title;
    }
    tr.append(td);
  }
  return tr;
}

function fill(tbody: HTMLTableSectionElement, rows: readonly HTMLTableRowElement[]): void {
  tbody.replaceChildren(...rows);
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit] as string}`;
}

function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** Replica id → node name, from the roster. */
export function namer(cluster: ClusterJson): (replica: number | null) => string {
  const names = new Map(cluster.nodes.map((n) => [n.replicaId, n.name]));
  return (replica) => (replica === null ? '—' : (names.get(replica) ?? `replica ${replica}`));
}

export function renderNodes(tbody: HTMLTableSectionElement, cluster: ClusterJson): void {
  fill(tbody, cluster.nodes.map((n: ClusterNodeJson) => {
    const s = n.summary;
    const role = s === null ? '—' : s.metadata.primary === n.replicaId ? 'primary' : 'backup';
    const ready: Cell = s === null ? { text: 'unknown', className: 'muted' }
      : s.ready ? { text: 'ready', className: 'ok' } : { text: `not ready (${s.readinessFailed.join(', ')})`, className: 'bad' };
    const reachable: Cell = n.self ? { text: 'this node', className: 'ok' }
      : n.refused ? { text: 'refused the token', className: 'bad', title: 'it answered 401: it does not know this token (yet), or it was deleted' }
      : n.reachable ? { text: n.linkUp ? 'yes (replica link up)' : 'HTTP only (replica link down)', className: n.linkUp ? 'ok' : 'warn' }
        : { text: 'unreachable', className: 'bad', title: n.error ?? '' };
    return row([
      n.name, String(n.replicaId), role, ready, reachable, s?.node.tcp ?? '—',
      { text: s === null ? '—' : formatCount(s.traffic.connections), className: 'num' },
      s === null ? '—' : `${s.metadata.view} / ${formatCount(s.metadata.commit)}`,
      s === null ? '—' : formatDuration(s.node.uptimeSeconds),
    ], { node: n.name, ready: String(s?.ready ?? false), reachable: String(n.reachable), refused: String(n.refused) });
  }));
}

/** Each group once: its primary as the nodes see it, and every node's distance to the highest commit. */
export function renderGroups(tbody: HTMLTableSectionElement, cluster: ClusterJson): void {
  const name = namer(cluster);
  const byGroup = new Map<string, { plane: string; label: string; view: number; primary: number | null; commits: Map<string, number> }>();
  for (const n of cluster.nodes) {
    for (const g of n.summary?.groups ?? []) {
      let entry = byGroup.get(g.group);
      if (entry === undefined) {
        entry = { plane: g.plane, label: g.name, view: g.view, primary: g.primary, commits: new Map() };
        byGroup.set(g.group, entry);
      }
      if (g.view > entry.view || (entry.primary === null && g.primary !== null)) {
        entry.view = g.view;
        entry.primary = g.primary;
      }
      entry.commits.set(n.name, g.commit);
    }
  }
  fill(tbody, [...byGroup.entries()].map(([group, g]) => {
    const top = Math.max(...g.commits.values());
    const lags = [...g.commits.entries()].map(([node, commit]) => `${node}: ${formatCount(top - commit)}`).join(', ');
    return row([g.label, g.plane, name(g.primary), String(g.view), formatCount(top), lags], { group, label: g.label });
  }));
}

export interface PartitionRow {
  readonly stream: string;
  readonly topic: string;
  readonly partition: PartitionJson;
  /** Messages per second since the previous answer (null on the first). */
  readonly rate: number | null;
}

/** Every partition once, as its primary reports it (a backup's copy when no primary answered). */
export function partitionRows(cluster: ClusterJson): { stream: string; topic: string; partition: PartitionJson }[] {
  const best = new Map<string, { stream: string; topic: string; partition: PartitionJson }>();
  for (const n of cluster.nodes) {
    for (const stream of n.summary?.streams ?? []) {
      for (const topic of stream.topics) {
        for (const partition of topic.partitions) {
          const key = `${stream.id}/${topic.id}/${partition.partition}`;
          const seen = best.get(key);
          if (seen === undefined || (!seen.partition.primary && partition.primary)) best.set(key, { stream: stream.name, topic: topic.name, partition });
        }
      }
    }
  }
  return [...best.values()];
}

export function renderPartitions(tbody: HTMLTableSectionElement, rows: readonly PartitionRow[], cluster: ClusterJson): void {
  const name = namer(cluster);
  fill(tbody, rows.map((r) => row([
    r.stream, r.topic, String(r.partition.partition),
    { text: formatCount(r.partition.messages), className: 'num messages' },
    { text: r.rate === null ? '—' : formatCount(Math.round(r.rate)), className: 'num rate' },
    { text: formatBytes(r.partition.bytes), className: 'num' },
    { text: String(r.partition.segments), className: 'num' },
    { text: formatCount(r.partition.currentOffset), className: 'num' },
    name(r.partition.primaryReplica),
  ], { partition: `${r.stream}/${r.topic}/${r.partition.partition}` })));
}

/**
 * Every consumer group once; each partition's lag as the partition's primary computed it (a
 * backup's copy when no primary answered).
 */
export function renderConsumerGroups(tbody: HTMLTableSectionElement, cluster: ClusterJson): void {
  interface Entry { stream: string; topic: string; group: ConsumerGroupJson; lags: Map<number, { lag: number; primary: boolean }> }
  const groups = new Map<string, Entry>();
  for (const n of cluster.nodes) {
    for (const stream of n.summary?.streams ?? []) {
      for (const topic of stream.topics) {
        const primaries = new Set(topic.partitions.filter((p) => p.primary).map((p) => p.partition));
        for (const group of topic.consumerGroups) {
          const key = `${stream.id}/${topic.id}/${group.id}`;
          let entry = groups.get(key);
          if (entry === undefined) {
            entry = { stream: stream.name, topic: topic.name, group, lags: new Map() };
            groups.set(key, entry);
          }
          for (const p of group.partitions) {
            const primary = primaries.has(p.partition);
            const seen = entry.lags.get(p.partition);
            if (seen === undefined || (!seen.primary && primary)) entry.lags.set(p.partition, { lag: p.lag, primary });
          }
        }
      }
    }
  }
  fill(tbody, [...groups.values()].map((e) => {
    const lags = [...e.lags.entries()].sort((a, b) => a[0] - b[0]);
    const total = lags.reduce((n, [, l]) => n + l.lag, 0);
    return row([
      e.stream, e.topic, e.group.name, { text: String(e.group.members), className: 'num' }, { text: formatCount(total), className: 'num lag' },
      lags.map(([partition, l]) => `${partition}: ${formatCount(l.lag)}`).join(', '),
    ], { consumerGroup: `${e.stream}/${e.topic}/${e.group.name}` });
  }));
}
