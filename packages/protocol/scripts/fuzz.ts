/**
 * `npm run fuzz -- --iterations N [--target name[,name…]] [--seed S] [--dir path]`
 *
 * Fuzzes every target in scripts/fuzz/targets/ (or the named ones) with N inputs EACH. Prints one
 * line per target, every failure with its seed, iteration and input hex, then `N inputs, M
 * failures`. Exit code 1 on any failure (a target that fails to load counts). Without --seed a
 * fresh seed is drawn and printed; the same --seed replays the same inputs. `--dir` fuzzes the
 * targets of other folders, comma-separated (default: DEFAULT_DIRS).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TARGETS_DIR, discoverTargets, fuzzTarget, type FuzzFailure, type LoadedTargets } from './fuzz/harness.js';

/**
 * This package's targets (wire codecs), and the runtime's (the decoders of its own frames and
 * headers: forwarding channel, HTTP bearer, offset-write bodies), which this package cannot import.
 */
const DEFAULT_DIRS = [TARGETS_DIR, fileURLToPath(new URL('../../runtime/scripts/fuzz-targets', import.meta.url))];

/** Every folder's targets; a name used twice is a load failure. */
async function discoverAll(dirs: readonly string[], seed: bigint): Promise<LoadedTargets> {
  const targets: LoadedTargets['targets'] = [];
  const failures: FuzzFailure[] = [];
  for (const dir of dirs) {
    const loaded = await discoverTargets(dir, seed);
    failures.push(...loaded.failures);
    for (const target of loaded.targets) {
      if (targets.some((t) => t.name === target.name)) {
        failures.push({ target: target.name, iteration: -1, seed: seed.toString(), kind: 'load', detail: `duplicate target name ${target.name} (${dir})`, inputHex: '' });
      } else {
        targets.push(target);
      }
    }
  }
  return { targets, failures };
}

const PRINTED_FAILURES_PER_TARGET = 20;

function parseSeed(text: string | undefined): bigint {
  if (text === undefined) return BigInt(Date.now()) * 1000n + BigInt(process.pid % 1000);
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(text)) throw new Error(`--seed must be an integer, got ${text}`);
  return BigInt.asUintN(64, BigInt(text));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '10000' },
      target: { type: 'string' },
      seed: { type: 'string' },
      dir: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help === true) {
    console.log('usage: npm run fuzz -- --iterations N [--target name[,name...]] [--seed S] [--dir path]');
    return 0;
  }
  const iterations = Number(values.iterations);
  if (!(Number.isSafeInteger(iterations) && iterations >= 0)) throw new Error(`--iterations must be a count, got ${values.iterations}`);
  const seed = parseSeed(values.seed);
  console.log(`fuzz seed ${seed} (replay: --seed ${seed}), ${iterations} inputs per target`);

  const dirs = values.dir === undefined ? DEFAULT_DIRS : values.dir.split(',').map((d) => resolve(d.trim()));
  const loaded = await discoverAll(dirs, seed);
  const wanted = values.target === undefined ? null : new Set(values.target.split(',').map((s) => s.trim()));
  const targets = wanted === null ? loaded.targets : loaded.targets.filter((t) => wanted.has(t.name));
  if (wanted !== null) {
    const missing = [...wanted].filter((name) => !loaded.targets.some((t) => t.name === name));
    if (missing.length > 0) {
      console.log(`unknown target(s): ${missing.join(', ')}; known: ${loaded.targets.map((t) => t.name).join(', ')}`);
      return 1;
    }
  }
  const printFailure = (failure: FuzzFailure): void => {
    console.log(
      `FAIL ${failure.target} ${failure.kind} seed=${failure.seed} iteration=${failure.iteration}: ${failure.detail}` +
        (failure.inputHex === '' ? '' : `\n  input (${failure.inputHex.length / 2} bytes): ${failure.inputHex}`),
    );
  };
  for (const failure of loaded.failures) printFailure(failure);

  let inputs = 0;
  let failures = loaded.failures.length;
  const nameWidth = Math.max(24, ...targets.map((t) => t.name.length + 1));
  for (const target of targets) {
    let printed = 0;
    const report = fuzzTarget(target, {
      iterations,
      seed,
      onFailure: (failure) => {
        if (printed++ < PRINTED_FAILURES_PER_TARGET) printFailure(failure);
      },
    });
    inputs += report.inputs;
    failures += report.failures;
    const classes = [...report.outcomes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
    console.log(
      `${report.name.padEnd(nameWidth)} ${String(report.inputs).padStart(8)} inputs ${String(report.failures).padStart(5)} failures ` +
        `${(report.millis / 1000).toFixed(1).padStart(6)} s   ${classes}`,
    );
  }
  console.log(`${inputs} inputs, ${failures} failures`);
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
