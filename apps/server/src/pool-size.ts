/**
 * Loaded by the CommonJS launcher (bin/shoal-server.cjs) with `require()` BEFORE the server
 * module, to size `UV_THREADPOOL_SIZE` before anything can start the pool (an ES module entry
 * would already have used it to load itself). Only synchronous code below.
 */
import { parseFlags } from './flags.js';
import { threadPoolSizeFor } from './load.js';

export function poolSize(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): number {
  return threadPoolSizeFor(argv, env, parseFlags);
}
