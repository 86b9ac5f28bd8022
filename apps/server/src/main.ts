/**
 * `shoal-server`: parse flags, load and validate the configuration, run one node. Exit codes:
 * docs/operations.md (0 clean shutdown, 2 usage, 3/4 configuration, and one per fatal reason).
 */
import { SHOAL_VERSION, exitCodeOf, runNode } from '@shoal/runtime';
import { USAGE, parseFlags } from './flags.js';
import { loadNodeConfig } from './load.js';

export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const parsed = parseFlags(argv);
  switch (parsed.kind) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return;
    case 'version':
      process.stdout.write(`shoal-server ${SHOAL_VERSION} (Apache Iggy binary protocol 0.11.0)\n`);
      return;
    case 'error':
      process.stderr.write(`shoal-server: ${parsed.message}\n${USAGE}\n`);
      process.exit(exitCodeOf('usage'));
  }
  const loaded = loadNodeConfig(parsed.flags, env);
  if (!loaded.ok) {
    process.stderr.write(`${loaded.message}\n`);
    process.exit(exitCodeOf(loaded.reason));
  }
  await runNode({ config: loaded.config, warnings: loaded.warnings });
}

export { parseFlags, USAGE } from './flags.js';
export { loadNodeConfig } from './load.js';
export { renderClusterConfig, type LocalClusterSpec, type LocalNode } from './cluster-config.js';
