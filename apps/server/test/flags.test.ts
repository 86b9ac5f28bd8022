import { describe, expect, it } from 'vitest';
import { parseFlags } from '../src/flags.js';
import { loadNodeConfig, threadPoolSizeFor } from '../src/load.js';

describe('shoal-server flags', () => {
  it('parses --config, --replica-id and --fresh in both spellings', () => {
    expect(parseFlags(['--config', 'a.toml', '--replica-id', '2', '--fresh'])).toEqual({ kind: 'run', flags: { fresh: true, configPath: 'a.toml', replicaId: 2 } });
    expect(parseFlags(['--config=b.toml', '--replica-id=0', '-f'])).toEqual({ kind: 'run', flags: { fresh: true, configPath: 'b.toml', replicaId: 0 } });
    expect(parseFlags([])).toEqual({ kind: 'run', flags: { fresh: false } });
    expect(parseFlags(['--help']).kind).toBe('help');
    expect(parseFlags(['-V']).kind).toBe('version');
  });

  it('parses --with-default-root-credentials (the reference flag) and refuses a value for it', () => {
    expect(parseFlags(['--with-default-root-credentials'])).toEqual({ kind: 'run', flags: { fresh: false, withDefaultRootCredentials: true } });
    expect(parseFlags(['--with-default-root-credentials=yes'])).toMatchObject({ kind: 'error' });
    const loaded = loadNodeConfig({ withDefaultRootCredentials: true }, {});
    expect(loaded.ok && loaded.config.root).toEqual({ username: 'iggy', password: 'iggy', fromDefaultFlag: true });
    const none = loadNodeConfig({}, {});
    expect(none.ok && none.config.root.password).toBeNull();
  });

  it('refuses unknown arguments and bad values with a message', () => {
    expect(parseFlags(['--nope'])).toMatchObject({ kind: 'error' });
    expect(parseFlags(['--replica-id', 'x'])).toMatchObject({ kind: 'error' });
    expect(parseFlags(['--replica-id', '256'])).toMatchObject({ kind: 'error' });
    expect(parseFlags(['--config'])).toMatchObject({ kind: 'error' });
  });

  it('loads the built-in defaults with no file, and names the key of a bad override', () => {
    const loaded = loadNodeConfig({}, {});
    expect(loaded.ok).toBe(true);
    if (loaded.ok) expect(loaded.config.node.listeners.tcp).toEqual({ host: '127.0.0.1', port: 8090 });
    const bad = loadNodeConfig({}, { SHOAL_SYSTEM_SHARDING_SHARDS: '0' });
    expect(bad).toMatchObject({ ok: false, reason: 'config_invalid' });
    if (!bad.ok) expect(bad.message).toContain('system.sharding.shards');
    expect(loadNodeConfig({ configPath: '/nonexistent/shoal.toml' }, {})).toMatchObject({ ok: false, reason: 'config_unreadable' });
  });

  it('sizes the libuv pool for the shard count (at least 4)', () => {
    expect(threadPoolSizeFor([], { SHOAL_SYSTEM_SHARDING_SHARDS: '8' }, parseFlags)).toBe(10);
    expect(threadPoolSizeFor([], { SHOAL_SYSTEM_SHARDING_SHARDS: '1' }, parseFlags)).toBe(4);
    expect(threadPoolSizeFor(['--bogus'], {}, parseFlags)).toBe(4);
  });
});
