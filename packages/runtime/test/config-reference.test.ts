/**
 * The reference server's stock configuration boots unchanged (fixture: test/fixtures/iggy/,
 * apache/iggy core/server/config.toml at cc269ef): the sections that only tune what Shoal does not
 * have are accepted with one warning each; a key that asks for a protection Shoal cannot give
 * refuses boot, naming the key, from the file or from the environment.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { load } from './config-fixtures.js';

const STOCK = readFileSync(new URL('../../../test/fixtures/iggy/config.toml', import.meta.url), 'utf8');
const IGNORED = '[quic] [websocket] [websocket.tls] http.web_ui [http.cors] [http.jwt] [http.tls] [telemetry] [data_maintenance.messages] [system.encryption] [system.memory_pool]'.split(' ');

describe("the reference's stock config.toml", () => {
  it('boots, with one warning per section Shoal does not implement', () => {
    const result = load({ file: STOCK });
    expect(result.ok, result.ok ? '' : result.errors.map((e) => e.message).join('\n')).toBe(true);
    if (!result.ok) return;
    for (const section of IGNORED) {
      expect(result.warnings.filter((w) => w.startsWith(`${section}:`)), section).toHaveLength(1);
    }
    // What Shoal does implement is read from it.
    expect(result.config.node.listeners.tcp).toEqual({ host: '127.0.0.1', port: 8090 });
    expect(result.config.tcp.tls).toEqual({ enabled: false, selfSigned: true, certFile: 'core/certs/iggy_cert.pem', keyFile: 'core/certs/iggy_key.pem' });
    expect(result.config.cluster.name).toBe('iggy-cluster');
    expect(result.config.consumerGroup.rebalancingTimeoutMs).toBe(30_000);
  });

  it.each([
    ['system.encryption', 'encryption at rest'],
    ['http.tls', 'TLS on the HTTP listener'],
    ['websocket.tls', 'TLS on the WebSocket listener'],
  ])('refuses boot when %s.enabled asks for %s (file and environment)', (section, protection) => {
    const header = `[${section}]`;
    const at = STOCK.indexOf(`\n${header}\n`);
    expect(at).toBeGreaterThan(0);
    const enabledAt = STOCK.indexOf('enabled = false', at);
    const file = `${STOCK.slice(0, enabledAt)}enabled = true${STOCK.slice(enabledAt + 'enabled = false'.length)}`;
    const fromFile = load({ file });
    expect(fromFile.ok).toBe(false);
    if (!fromFile.ok) expect(fromFile.errors.map((e) => e.message).join('\n')).toContain(`${section}.enabled: asks for ${protection}`);
    const name = `IGGY_${section.replace('.', '_').toUpperCase()}_ENABLED`;
    const fromEnv = load({ file: STOCK, env: { [name]: 'true' } });
    expect(fromEnv.ok).toBe(false);
    if (!fromEnv.ok) expect(fromEnv.errors.map((e) => `${e.path} ${e.message}`).join('\n')).toContain(name);
    // Off is accepted (one warning), on or off alike for the sections that are not security.
    expect(load({ file: STOCK, env: { [name]: 'false' } }).ok).toBe(true);
  });

  it('an unknown key in a security section refuses; elsewhere it is part of the ignored section', () => {
    const typo = load({ file: '[system.encryption]\nenabeld = true\n' });
    expect(typo.ok).toBe(false);
    if (!typo.ok) expect(typo.errors[0]?.message).toContain('unknown key in the security section [system.encryption]');
    const quic = load({ file: '[quic]\nenabled = true\nsome_future_knob = 3\n', env: { IGGY_QUIC_ADDRESS: '0.0.0.0:8080' } });
    expect(quic.ok).toBe(true);
    if (quic.ok) expect(quic.warnings.filter((w) => w.startsWith('[quic]:'))).toHaveLength(1);
    const telemetry = load({ env: { IGGY_TELEMETRY_ENABLED: 'true', IGGY_TELEMETRY_LOGS_ENDPOINT: 'http://x' } });
    expect(telemetry.ok && telemetry.warnings.filter((w) => w.startsWith('[telemetry]:'))).toHaveLength(1);
  });
});
