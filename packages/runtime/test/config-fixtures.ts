import { expect } from 'vitest';
import { loadConfig, type ConfigError, type LoadConfigInput, type ShoalConfig } from '../src/index.js';

/** Injected core count: the default shard count must not depend on the machine running the tests. */
export const CORES = 4;

export type TestInput = Partial<LoadConfigInput>;

export function load(input: TestInput = {}): ReturnType<typeof loadConfig> {
  return loadConfig({ env: {}, availableParallelism: CORES, ...input });
}

export function loadOk(input: TestInput = {}): { config: ShoalConfig; warnings: readonly string[] } {
  const result = load(input);
  if (!result.ok) throw new Error(`expected a valid config, got:\n${result.errors.map((error) => error.message).join('\n')}`);
  return { config: result.config, warnings: result.warnings };
}

export function errorsOf(input: TestInput = {}): readonly ConfigError[] {
  const result = load(input);
  return result.ok ? [] : result.errors;
}

/** Asserts that loading fails with an error on `path` whose message contains every fragment. */
export function expectError(input: TestInput, path: string, ...fragments: string[]): ConfigError {
  const errors = errorsOf(input);
  const listing = errors.map((error) => error.message).join('\n') || '(no errors)';
  const hit = errors.find((error) => error.path === path && fragments.every((fragment) => error.message.includes(fragment)));
  expect(hit, `no error on ${path} containing ${JSON.stringify(fragments)}; got:\n${listing}`).toBeDefined();
  expect(hit?.message.startsWith(`${path}: `)).toBe(true);
  return hit as ConfigError;
}

export const SECRET = 'k'.repeat(32);
export const OTHER_SECRET = 'q'.repeat(40);

/** A valid 3-node loopback roster (auth off, so single rules can be switched on by env). */
export const CLUSTER_FILE = `
[cluster]
enabled = true
name = "test-cluster"

[[cluster.nodes]]
name = "node-0"
ip = "127.0.0.1"
replica_id = 0
ports = { tcp = 8090, http = 3000, tcp_replica = 9090 }

[[cluster.nodes]]
name = "node-1"
ip = "127.0.0.1"
replica_id = 1
ports = { tcp = 8091, http = 3001, tcp_replica = 9091 }

[[cluster.nodes]]
name = "node-2"
ip = "127.0.0.1"
replica_id = 2
ports = { tcp = 8092, http = 3002, tcp_replica = 9092 }
`;

/** `replicaId: null` leaves `--replica-id` out. */
export function cluster(env: Record<string, string> = {}, replicaId: number | null = 0, file = CLUSTER_FILE): TestInput {
  return { file, env, flags: replicaId === null ? {} : { replicaId } };
}

/** A roster file built from per-node TOML bodies (each gets its own [[cluster.nodes]] header). */
export function rosterFile(nodes: readonly string[], head = '[cluster]\nenabled = true\n'): string {
  return `${head}\n${nodes.map((node) => `[[cluster.nodes]]\n${node}\n`).join('\n')}`;
}

export function node(index: number, extra = '', ports = `{ tcp = ${8090 + index}, http = ${3000 + index}, tcp_replica = ${9090 + index} }`): string {
  return `name = "node-${index}"\nip = "127.0.0.1"\nreplica_id = ${index}\nports = ${ports}\n${extra}`;
}
