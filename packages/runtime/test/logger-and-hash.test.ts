import { describe, expect, it } from 'vitest';
import { LogFilter, createLogger, type LogSink } from '../src/log/logger.js';
import { SCRYPT_PARAMS, hashPassword, verifyPassword } from '../src/pool/password-hash.js';

describe('structured logs', () => {
  it('writes one JSON line per event with time, level, target, thread, msg and fields', () => {
    const lines: string[] = [];
    const sink: LogSink = { write: (line) => lines.push(line) };
    const log = createLogger({ logging: { defaultLevel: 'info', directives: [] }, thread: 'shard-1', target: 'runtime', sinks: [sink] });
    log.debug('hidden');
    log.info('listening', { address: '127.0.0.1:8090', op: 5n, bytes: new Uint8Array(3) });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    const record = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(Object.keys(record).slice(0, 5)).toEqual(['time', 'level', 'target', 'thread', 'msg']);
    expect(record).toMatchObject({ level: 'info', target: 'runtime', thread: 'shard-1', msg: 'listening', address: '127.0.0.1:8090', op: '5', bytes: '<3 bytes>' });
  });

  it('filters by RUST_LOG-style directives, the longest target prefix winning', () => {
    const filter = new LogFilter('warn', [{ target: 'runtime', level: 'info' }, { target: 'runtime::shard', level: 'trace' }]);
    expect(filter.thresholdFor('consensus')).toBe(3);
    expect(filter.thresholdFor('runtime::supervisor')).toBe(2);
    expect(filter.thresholdFor('runtime::shard::channels')).toBe(0);
    expect(filter.thresholdFor('runtimex')).toBe(3);
  });
});

describe('password hashes (scrypt, PHC-style)', () => {
  it('verifies the right password only, and names its own parameters', () => {
    const hash = hashPassword('iggy', { ...SCRYPT_PARAMS, ln: 10 });
    expect(hash).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(hash.length).toBeLessThan(255);
    expect(verifyPassword('iggy', hash)).toBe(true);
    expect(verifyPassword('iggz', hash)).toBe(false);
    expect(hashPassword('iggy', { ...SCRYPT_PARAMS, ln: 10 })).not.toBe(hash); // salted
  });

  it('refuses strings it did not write and absurd parameters, without throwing', () => {
    for (const bad of ['', 'iggy', '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA', '$scrypt$ln=40,r=8,p=1$c2FsdA$aGFzaA', '$scrypt$ln=10,r=8,p=1$$']) {
      expect(verifyPassword('iggy', bad)).toBe(false);
    }
  });
});
