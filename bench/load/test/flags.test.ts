import { describe, expect, it } from 'vitest';
import { DEFAULT_WORKLOAD, UsageError, commandLine, parseFlags } from '../src/flags.js';
import { SUITE, buildPlan } from '../src/plan.js';

describe('flags', () => {
  it('defaults: the standard suite', () => {
    const options = parseFlags([]);
    expect(options.base).toEqual(DEFAULT_WORKLOAD);
    expect(options.explicit.size).toBe(0);
    const plan = buildPlan(options);
    expect(plan.kind).toBe('suite');
    expect(plan.scenarios.map((s) => s.id)).toEqual(Object.values(SUITE));
    expect(plan.scenarios.every((s) => !s.systems.includes('nats'))).toBe(true);
    const compare = buildPlan(parseFlags(['--compare', 'nats']));
    expect(compare.scenarios.filter((s) => s.systems.includes('nats')).map((s) => s.id)).toEqual([SUITE.batch1000, SUITE.window256, SUITE.spread3, SUITE.oneAtATime]);
    expect(compare.scenarios.find((s) => s.id === SUITE.viaBackup)?.workload).toMatchObject({ replicas: 3, batch: 1000, inFlight: 8, entry: 'backup' });
    expect(compare.scenarios.find((s) => s.id === SUITE.spread3)?.workload).toMatchObject({ replicas: 3, partitions: 3, producers: 3, entry: 'primary' });
    const window = compare.scenarios.find((s) => s.id === SUITE.window256);
    expect(window?.workload).toMatchObject({ replicas: 3, batch: 1, inFlight: 256, messageSize: 1024 });
    expect(compare.sweeps).toEqual([{ key: 'shards', values: [1, 2], scenarioIds: [SUITE.shards1, SUITE.shards2] }]);
  });

  it('every flag of the issue, as a custom workload', () => {
    const options = parseFlags([
      '--replicas', '5', '--shards', '4', '--partitions', '8', '--producers', '2', '--consumers', '3', '--message-size', '512',
      '--batch', '100', '--in-flight', '16', '--messages', '50000', '--warmup', '0.5', '--json', 'out.json', '--html', 'out.html',
      '--compare', 'nats', '--target', '127.0.0.1:8090,localhost:8091,[::1]:8092',
    ]);
    expect(options.base).toEqual({
      replicas: 5, shards: 4, partitions: 8, producers: 2, consumers: 3, messageSize: 512, batch: 100, inFlight: 16, rate: 0,
      messages: 50_000, durationS: null, warmupS: 0.5, entry: 'primary',
    });
    expect(options).toMatchObject({ compare: 'nats', jsonPath: 'out.json', htmlPath: 'out.html', failover: false });
    expect(options.target).toEqual(['127.0.0.1:8090', 'localhost:8091', '[::1]:8092']);
    const plan = buildPlan(options);
    expect(plan.kind).toBe('custom');
    expect(plan.scenarios).toHaveLength(1);
    expect(plan.scenarios[0]?.systems).toEqual(['shoal', 'nats']);
  });

  it('--entry backup: a custom workload whose producers connect to a node that forwards', () => {
    const options = parseFlags(['--entry', 'backup']);
    expect(options.base.entry).toBe('backup');
    expect(buildPlan(options).kind).toBe('custom');
    expect(() => parseFlags(['--entry', 'leader'])).toThrow(UsageError);
  });

  it('run-length flags alone keep the suite', () => {
    const options = parseFlags(['--duration', '2', '--warmup', '0']);
    expect(buildPlan(options).kind).toBe('suite');
    expect(buildPlan(options).scenarios.every((s) => s.workload.durationS === 2 && s.workload.warmupS === 0)).toBe(true);
  });

  it('sweeps: one scenario per value, NATS except for shards, several sweeps', () => {
    const options = parseFlags(['--sweep', 'batch=1,10,100,1000', '--sweep', 'shards=1,2,4', '--compare', 'nats', '--in-flight', '4']);
    const plan = buildPlan(options);
    expect(plan.kind).toBe('sweep');
    expect(plan.sweeps.map((s) => [s.key, s.values])).toEqual([['batch', [1, 10, 100, 1000]], ['shards', [1, 2, 4]]]);
    expect(plan.scenarios.map((s) => s.id)).toEqual([
      'sweep-batch-1', 'sweep-batch-10', 'sweep-batch-100', 'sweep-batch-1000', 'sweep-shards-1', 'sweep-shards-2', 'sweep-shards-4',
    ]);
    expect(plan.scenarios.map((s) => s.workload.batch)).toEqual([1, 10, 100, 1000, 1000, 1000, 1000]);
    expect(plan.scenarios.every((s) => s.workload.inFlight === 4)).toBe(true);
    expect(plan.scenarios.find((s) => s.id === 'sweep-batch-10')?.systems).toEqual(['shoal', 'nats']);
    expect(plan.scenarios.find((s) => s.id === 'sweep-shards-2')?.systems).toEqual(['shoal']);
    expect(plan.scenarios.find((s) => s.id === 'sweep-shards-2')?.workload.shards).toBe(2);
    const sizes = buildPlan(parseFlags(['--sweep', 'message-size=16,1024', '--sweep', 'messages=10,20']));
    expect(sizes.scenarios.map((s) => [s.workload.messageSize, s.workload.messages, s.workload.durationS])).toEqual([[16, null, 5], [1024, null, 5], [1024, 10, null], [1024, 20, null]]);
  });

  it('usage errors', () => {
    const bad = (argv: string[], message: RegExp): void => {
      expect(() => parseFlags(argv)).toThrow(UsageError);
      expect(() => parseFlags(argv)).toThrow(message);
    };
    bad(['--replicas', '2'], /must be 1, 3 or 5/);
    bad(['--batch', '0'], /between 1 and/);
    bad(['--batch', 'ten'], /whole number/);
    bad(['--message-size', '8'], /between 16 and/);
    bad(['--messages', '10', '--duration', '5'], /exclude each other/);
    bad(['--sweep', 'batch=1'], /at least two values/);
    bad(['--sweep', 'colour=1,2'], /unknown key/);
    bad(['--sweep', 'batch=1,1'], /repeat/);
    bad(['--sweep', 'batch=1,2', '--sweep', 'batch=3,4'], /one sweep per key/);
    bad(['--batch', '5', '--sweep', 'batch=1,2'], /exclude each other/);
    bad(['--compare', 'kafka'], /only 'nats'/);
    bad(['--target', 'nohost'], /not host:port/);
    bad(['--target', '127.0.0.1:8090', '--sweep', 'shards=1,2'], /--target/);
    bad(['--failover', '--sweep', 'batch=1,2'], /no --sweep/);
    bad(['--frobnicate'], /Unknown option/);
    bad(['positional'], /positional/i);
    bad(['--duration', '0'], /above 0/);
  });

  it('the reproducing command line', () => {
    expect(commandLine([])).toBe('npm run bench');
    expect(commandLine(['--compare', 'nats', '--json', 'out dir/x.json'])).toBe("npm run bench -- --compare nats --json 'out dir/x.json'");
  });
});
