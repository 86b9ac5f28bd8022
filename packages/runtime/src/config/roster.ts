/**
 * `[[cluster.nodes]]` rules, checked when `cluster.enabled = true`:
 *
 *   - 1..=32 entries (consensus supports at most 32 replicas);
 *   - names non-empty and unique; `ip` a literal IP; `replica_id` unique and < roster size
 *     (so ids are exactly 0..n-1);
 *   - `ports.tcp_replica` always, `ports.tcp` / `ports.http` when that transport is enabled;
 *     ports non-zero (a bound) and no `ip:port` claimed twice;
 *   - `advertised_address` and selector addresses: a literal IP or an RFC 1123 hostname;
 *   - selectors: at most 16 per node, valid CIDRs, no duplicate CIDR on one node (compared
 *     truncated), no two nodes advertising one host:port to overlapping client sets;
 *   - `--replica-id` matches exactly one entry.
 */
import { cidrsEqual, cidrsOverlap, ipKey, isAdvertisableHost, isIpLiteral, parseCidr, type Cidr } from './address.js';
import type { Diagnostics } from './errors.js';
import type { ConfigFlags } from './resolve.js';
import type { ClusterNode, ShoalConfig } from './types.js';

type ClientPort = 'tcp' | 'quic' | 'http' | 'websocket';
const CLIENT_PORTS: readonly ClientPort[] = ['tcp', 'quic', 'http', 'websocket'];
const PORT_KEYS = { tcp: 'tcp', quic: 'quic', http: 'http', websocket: 'websocket', tcpReplica: 'tcp_replica' } as const;

export function validateRoster(config: ShoalConfig, flags: ConfigFlags, diagnostics: Diagnostics): void {
  const nodes = config.cluster.nodes;
  if (nodes.length === 0) {
    diagnostics.error('required', 'cluster.nodes', 'must list at least one node when cluster.enabled = true');
    return;
  }
  checkIdentity(nodes, diagnostics);
  checkPorts(config, diagnostics);
  checkAdvertised(nodes, diagnostics);
  checkSelf(nodes, flags, diagnostics);
}

function checkIdentity(nodes: readonly ClusterNode[], diagnostics: Diagnostics): void {
  const names = new Map<string, number>();
  const ids = new Map<number, number>();
  nodes.forEach((node, index) => {
    const at = `cluster.nodes[${index}]`;
    const sameName = names.get(node.name);
    if (node.name !== '' && sameName !== undefined) {
      diagnostics.error('rule', `${at}.name`, `must be unique in the roster (cluster.nodes[${sameName}] is also "${node.name}")`);
    }
    names.set(node.name, index);
    if (node.ip !== '' && !isIpLiteral(node.ip)) {
      diagnostics.error('type', `${at}.ip`, `must be a literal IPv4 or IPv6 address, not a hostname (got "${node.ip}")`);
    }
    if (node.replicaId >= nodes.length) {
      diagnostics.error('range', `${at}.replica_id`,
        `must be < the roster size ${nodes.length}, so ids run 0..${nodes.length - 1} (got ${node.replicaId})`);
    }
    const sameId = ids.get(node.replicaId);
    if (sameId !== undefined) {
      diagnostics.error('rule', `${at}.replica_id`, `must be unique (cluster.nodes[${sameId}] also has ${node.replicaId})`);
    }
    ids.set(node.replicaId, index);
  });
}

function checkPorts(config: ShoalConfig, diagnostics: Diagnostics): void {
  const claimed = new Map<string, string>();
  config.cluster.nodes.forEach((node, index) => {
    const at = `cluster.nodes[${index}].ports`;
    if (config.tcp.enabled && node.ports.tcp === null) {
      diagnostics.error('required', `${at}.tcp`, 'required when tcp.enabled = true (in cluster mode the roster is the only source of ports)');
    }
    if (config.http.enabled && node.ports.http === null) {
      diagnostics.error('required', `${at}.http`, 'required when http.enabled = true (in cluster mode the roster is the only source of ports)');
    }
    for (const [field, key] of Object.entries(PORT_KEYS) as [keyof typeof PORT_KEYS, string][]) {
      const port = node.ports[field];
      if (port === null || port === 0 || node.ip === '') continue;
      const socket = `${ipKey(node.ip)}#${port}`;
      const owner = claimed.get(socket);
      if (owner !== undefined) {
        diagnostics.error('rule', `${at}.${key}`, `${node.ip}:${port} is already claimed by ${owner}; no two roster ports may share one ip:port`);
      } else {
        claimed.set(socket, `${at}.${key}`);
      }
    }
  });
}

interface Advertisement {
  readonly node: number;
  readonly path: string;
  readonly host: string;
  readonly port: number;
  /** null: every client not matched by a selector (the catch-all). */
  readonly clients: Cidr | null;
  /** The catch-all that falls back to the roster ip (already covered by the ip:port rule). */
  readonly isRosterIp: boolean;
}

function checkAdvertised(nodes: readonly ClusterNode[], diagnostics: Diagnostics): void {
  const advertisements: Advertisement[] = [];
  nodes.forEach((node, index) => {
    const at = `cluster.nodes[${index}]`;
    if (node.advertisedAddress !== null && !isAdvertisableHost(node.advertisedAddress)) {
      diagnostics.error('type', `${at}.advertised_address`,
        `must be a literal IP or an RFC 1123 hostname, with no port and no trailing dot (got "${node.advertisedAddress}")`);
    }
    const catchAll = node.advertisedAddress ?? node.ip;
    for (const transport of CLIENT_PORTS) {
      const port = node.ports[transport];
      if (port === null) continue;
      advertisements.push({
        node: index, path: `${at}.advertised_address`, host: catchAll, port, clients: null, isRosterIp: node.advertisedAddress === null,
      });
    }
    const seen: { cidr: Cidr; path: string }[] = [];
    node.advertisedAddresses.forEach((selector, selectorIndex) => {
      const sel = `${at}.advertised_addresses[${selectorIndex}]`;
      if (!isAdvertisableHost(selector.address)) {
        diagnostics.error('type', `${sel}.address`, `must be a literal IP or an RFC 1123 hostname, with no port (got "${selector.address}")`);
      }
      const parsed = parseCidr(selector.clientCidr);
      if (!parsed.ok) {
        diagnostics.error('type', `${sel}.client_cidr`, `invalid CIDR "${selector.clientCidr}": ${parsed.reason}`);
        return;
      }
      const duplicate = seen.find((other) => cidrsEqual(other.cidr, parsed.cidr));
      if (duplicate !== undefined) {
        diagnostics.error('rule', `${sel}.client_cidr`, `duplicates ${duplicate.path} on this node (compared truncated to the prefix)`);
      }
      seen.push({ cidr: parsed.cidr, path: `${sel}.client_cidr` });
      for (const transport of CLIENT_PORTS) {
        const port = node.ports[transport];
        if (port === null) continue;
        advertisements.push({ node: index, path: `${sel}.address`, host: selector.address, port, clients: parsed.cidr, isRosterIp: false });
      }
    });
  });
  reportAdvertisementConflicts(advertisements, diagnostics);
}

function reportAdvertisementConflicts(advertisements: readonly Advertisement[], diagnostics: Diagnostics): void {
  const reported = new Set<string>();
  for (let i = 0; i < advertisements.length; i += 1) {
    for (let j = i + 1; j < advertisements.length; j += 1) {
      const a = advertisements[i];
      const b = advertisements[j];
      if (a === undefined || b === undefined || a.node === b.node || (a.isRosterIp && b.isRosterIp)) continue;
      if (a.port !== b.port || ipKey(a.host) !== ipKey(b.host)) continue;
      const overlap = a.clients === null || b.clients === null || cidrsOverlap(a.clients, b.clients);
      if (!overlap || reported.has(b.path)) continue;
      reported.add(b.path);
      diagnostics.error('rule', b.path,
        `advertises ${b.host}:${b.port}, which ${a.path} also advertises to an overlapping set of clients`);
    }
  }
}

function checkSelf(nodes: readonly ClusterNode[], flags: ConfigFlags, diagnostics: Diagnostics): void {
  const replicaId = flags.replicaId;
  if (replicaId === undefined) return; // reported with the flag rules
  const matches = nodes.filter((node) => node.replicaId === replicaId).length;
  if (matches === 0) {
    diagnostics.error('rule', '--replica-id',
      `must match a cluster.nodes replica_id (got ${replicaId}; roster ids: ${nodes.map((node) => node.replicaId).join(', ')})`, 'flag');
  }
}
