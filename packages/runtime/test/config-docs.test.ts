import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envNameOf, KEYS, renderConfigReference } from '../src/index.js';
import { fieldValue } from '../src/config/render.js';
import { cluster, loadOk } from './config-fixtures.js';

const PAGE = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('carries the generated key reference (run `npm run docs:config -w @shoal/runtime` after changing the schema)', () => {
    expect(PAGE).toContain(renderConfigReference());
  });

  it('documents every key with its env override', () => {
    for (const key of KEYS) expect(PAGE, key.path).toContain(`IGGY_${envNameOf(key.path)}`);
  });
});

describe('schema ↔ ShoalConfig', () => {
  it('every key has a typed field', () => {
    const { config } = loadOk(cluster({
      IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESSES_0_CLIENT_CIDR: '10.0.0.0/8',
      IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESSES_0_ADDRESS: '10.0.0.1',
    }));
    for (const key of KEYS) {
      const concrete = key.path.replace(/\[\]/g, '[0]');
      const value = fieldValue(config, concrete, key);
      expect(value, key.path).not.toBeUndefined();
      if (key.default !== undefined || key.required === true) expect(value, key.path).not.toBeNull();
    }
  });

  it('env names are the reference form', () => {
    expect(envNameOf('system.sharding.cpu_allocation')).toBe('SYSTEM_SHARDING_CPU_ALLOCATION');
    expect(envNameOf('cluster.nodes[].ports.tcp_replica')).toBe('CLUSTER_NODES_<i>_PORTS_TCP_REPLICA');
    expect(envNameOf('cluster.nodes[].advertised_addresses[].address')).toBe('CLUSTER_NODES_<i>_ADVERTISED_ADDRESSES_<j>_ADDRESS');
  });
});
