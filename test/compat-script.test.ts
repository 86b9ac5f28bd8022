/**
 * The pieces of `npm run compat` that decide green or red (scripts/compat/): the TAP summary of
 * the SDK's suite, and the documented-deviation rule, which excuses a failure only when it is the
 * documented test on the documented target AND its diff shows nothing but the documented lines.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deviationFor } from '../scripts/compat/deviations.js';
import { runE2e } from '../scripts/compat/e2e.js';
import { parseTap } from '../scripts/compat/tap.js';
import { cleanEnv } from '../scripts/compat/nodes.js';

const tap = (diff: string[]): string => [
  '# Subtest: e2e -> system',
  '    # Subtest: e2e -> cluster::getClusterMetadata',
  '    not ok 1 - e2e -> cluster::getClusterMetadata',
  '      ---',
  "      failureType: 'testCodeFailure'",
  '      error: |-',
  '        Expected values to be strictly deep-equal:',
  '        + actual - expected ... Lines skipped',
  '          {',
  "            name: 'single-node',",
  '        ...',
  ...diff.map((line) => `        ${line}`),
  '      ...',
  'not ok 2 - e2e -> system',
  '  ---',
  "  failureType: 'subtestsFailed'",
  '  ...',
  'ok 3 - e2e -> stream::create',
  '# pass 63',
  '# fail 1',
].join('\n');

describe('npm run compat: TAP and deviations', () => {
  it('counts and names failed tests, not the suites around them', () => {
    const summary = parseTap(tap(['+         quic: 0,', '-         quic: 8080,']));
    expect(summary).toMatchObject({ passed: 63, failed: 1, complete: true, failures: ['e2e -> cluster::getClusterMetadata'] });
  });

  it('excuses the cluster-metadata test only on the single node and only for the QUIC / WebSocket ports', () => {
    const ports = parseTap(tap(['+         quic: 0,', '-         quic: 8080,', '+         websocket: 0', '-         websocket: 8092']));
    const name = 'e2e -> cluster::getClusterMetadata';
    expect(deviationFor('single', name, ports.details.get(name) ?? '')).toBeDefined();
    expect(deviationFor('cluster', name, ports.details.get(name) ?? '')).toBeUndefined();
    const more = parseTap(tap(['+         quic: 0,', '-         quic: 8080,', "+   name: 'shoal',", "-   name: 'iggy-node',"]));
    expect(deviationFor('single', name, more.details.get(name) ?? '')).toBeUndefined();
    expect(deviationFor('single', 'e2e -> user::create', ports.details.get(name) ?? '')).toBeUndefined();
  });

  it('an output without its closing counts is incomplete', () => {
    expect(parseTap('ok 1 - x\n').complete).toBe(false);
  });

  it('reads the summary of a real node test run on this node version (node 24 defaults to spec, not TAP)', async () => {
    // A runner that starts node's test runner the way run-sdk-e2e.sh does: 2 passing tests, 1 failing.
    const dir = mkdtempSync(join(tmpdir(), 'shoal-compat-runner-'));
    try {
      writeFileSync(join(dir, 'suite.test.mjs'), [
        "import test from 'node:test';",
        "test('e2e -> a::one', () => {});",
        "test('e2e -> a::two', () => {});",
        "test('e2e -> a::three', () => { throw new Error('boom'); });",
      ].join('\n'));
      writeFileSync(join(dir, 'runner.sh'), `cd "${dir}"\nexec "${process.execPath}" --test --test-concurrency=1 suite.test.mjs\n`);
      const run = await runE2e({
        runner: join(dir, 'runner.sh'), label: 'fake', address: '127.0.0.1:1', files: [], env: cleanEnv(),
        logFile: join(dir, 'out.log'), timeoutMs: 60_000,
      });
      expect(run.summary).toMatchObject({ complete: true, passed: 2, failed: 1, failures: ['e2e -> a::three'] });
      expect(run.exitCode).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
