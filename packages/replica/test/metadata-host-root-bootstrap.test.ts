/**
 * Regression (found by the runtime): with an ASYNC hashPassword port (the runtime's piscina pool),
 * `MetadataHost.tick` started a new root-password hash on every tick until the first one came
 * back (the 'root' pending key was only set after the hash), so a first boot queued dozens of
 * 160 ms scrypt jobs. One hash per bootstrap.
 */
import { describe, expect, it } from 'vitest';
import { Prng } from '@shoal/stdx';
import { SimDisk, mkdirDurable } from '@shoal/storage';
import { MetadataDriver, MetadataHost, type Transport } from '../src/index.js';

describe('MetadataHost root bootstrap', () => {
  it('hashes the root password once while the (async) hash is in flight, then creates root', async () => {
    const disk = new SimDisk({ seed: 7 });
    mkdirDurable(disk, '/data');
    mkdirDurable(disk, '/data/metadata');
    const transport: Transport = { sendToReplica: () => undefined, sendToClient: () => undefined };
    let clock = 1_700_000_000_000_000n;
    const opened = MetadataDriver.open({
      config: { cluster: 1n, replica: 0, replicaCount: 1 }, disk, transport, time: { realtimeMicros: () => (clock += 1n) },
      prng: new Prng(1), dir: '/data/metadata', autoFlush: true,
    });
    expect(opened.ok).toBe(true);
    if (!opened.ok) return;
    const driver = opened.driver;
    let calls = 0;
    let resolveHash: (hash: string) => void = () => undefined;
    const host = new MetadataHost({
      driver, transport, now: () => clock,
      ports: {
        hashPassword: () => {
          calls += 1;
          return new Promise<string>((resolve) => { resolveHash = resolve; });
        },
        verifyPassword: () => true,
        generateToken: () => 'token',
      },
    });
    for (let i = 0; i < 50; i++) {
      driver.tick();
      host.tick();
    }
    expect(calls).toBe(1);
    resolveHash('$scrypt$ln=10,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g');
    await Promise.resolve();
    for (let i = 0; i < 400 && driver.state.model.users.size === 0; i++) {
      driver.tick();
      host.tick();
    }
    expect(driver.state.model.users.size).toBe(1);
    expect(calls).toBe(1);
  });
});
