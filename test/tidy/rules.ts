/**
 * The import rules of ../shared/design/ARCHITECTURE.md, as data. Keys are workspace folders;
 * values are the workspace packages each may import. Anything not listed is forbidden.
 */
export const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  'packages/stdx': [],
  'packages/protocol': ['stdx'],
  'packages/consensus': ['stdx', 'protocol'],
  'packages/state': ['stdx', 'protocol', 'consensus'],
  'packages/storage': ['stdx', 'protocol', 'consensus', 'state'],
  'packages/replica': ['stdx', 'protocol', 'consensus', 'state', 'storage'],
  'packages/gateway': ['stdx', 'protocol', 'consensus', 'state'],
  'packages/ring': ['stdx'],
  'packages/runtime': ['stdx', 'protocol', 'consensus', 'state', 'storage', 'replica', 'ring', 'gateway'],
  'packages/client': ['stdx', 'protocol'],
  'packages/simulator': ['stdx', 'protocol', 'consensus', 'state', 'storage', 'replica', 'gateway', 'client'],
  'apps/server': ['stdx', 'protocol', 'consensus', 'state', 'storage', 'replica', 'ring', 'gateway', 'runtime'],
  'apps/cli': ['stdx', 'protocol', 'client', 'runtime'],
  'apps/vopr': ['stdx', 'protocol', 'consensus', 'state', 'storage', 'replica', 'gateway', 'client', 'simulator'],
  'bench/micro': ['stdx', 'protocol', 'ring', 'consensus', 'storage', 'state', 'replica', 'gateway', 'runtime'],
  'bench/load': ['stdx', 'protocol', 'client', 'runtime'],
  'bench/node': ['stdx', 'protocol', 'client'],
};

/** Packages whose src must be pure: no clocks, randomness, timers, promises of I/O, or node: modules. */
export const PURE_PACKAGES = ['packages/stdx', 'packages/protocol', 'packages/consensus', 'packages/state', 'packages/gateway'] as const;

/** Source patterns banned in pure packages, with the reason shown on failure. */
export const BANNED_IN_PURE: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /\bDate\.now\s*\(/, why: 'wall clock (time arrives as ticks or an injected source)' },
  { pattern: /\bnew\s+Date\s*\(/, why: 'wall clock' },
  { pattern: /\bperformance\.now\s*\(/, why: 'wall clock' },
  { pattern: /\bprocess\.hrtime\b/, why: 'wall clock' },
  { pattern: /\bMath\.random\s*\(/, why: 'unseeded randomness (pass a Prng)' },
  { pattern: /\bcrypto\.getRandomValues\b|\brandomBytes\s*\(|\brandomUUID\s*\(/, why: 'unseeded randomness' },
  { pattern: /\bset(Timeout|Interval|Immediate)\s*\(/, why: 'timers (use ticks)' },
  { pattern: /\bqueueMicrotask\s*\(/, why: 'scheduling' },
  { pattern: /\bprocess\.(env|argv|exit|stdout|stderr|nextTick)\b/, why: 'process I/O' },
  { pattern: /from\s+['"]node:|import\s*\(\s*['"]node:|require\s*\(\s*['"]node:/, why: 'node: module' },
  { pattern: /from\s+['"](fs|net|path|os|child_process|worker_threads|http|https|tls|dgram|crypto)['"]/, why: 'node I/O module' },
];

/** Additionally banned in the consensus core, the state machines and the gateway: no async at all. */
export const NO_ASYNC_PACKAGES = ['packages/consensus', 'packages/state', 'packages/gateway'] as const;
export const BANNED_ASYNC: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /\basync\s+(function|\(|[A-Za-z_$][\w$]*\s*\()/, why: 'async (the core is synchronous: inputs in, effects out)' },
  { pattern: /\bawait\b/, why: 'await' },
  { pattern: /\bnew\s+Promise\b|\bPromise\.(resolve|all|race|any)\b/, why: 'promises' },
];

/** Files allowed an exception, with the reason (kept short and reviewed). */
export const EXCEPTIONS: Readonly<Record<string, string>> = {
  // Loads the native XXH3 binding with a top-level dynamic import and falls back to WASM.
  'packages/protocol/src/hash/xxh3.ts': 'backend loading (top-level await of a dynamic import)',
};

/**
 * Layering inside packages/consensus (docs/internals-consensus-core.md, "Layers"): state below
 * transitions below handlers. The STATE files hold data and its own small methods; they import
 * nothing but other state files (not even types). Every other file may import state and other
 * files, but the value-level import graph has no cycle. A value-level import is any import that
 * survives compilation: with `verbatimModuleSyntax`, `import { type X } from` still loads the
 * module, so only `import type` / `export type` statements are type-level. Type-level imports
 * are erased; today the whole graph, types included, is acyclic too, and a second test keeps
 * it so (relax that one, not the value-level rule, if a type ever needs to point back).
 */
export const CONSENSUS_STATE_FILES: readonly string[] = [
  'types.ts', 'config.ts', 'effects.ts', 'drops.ts', 'marks.ts', 'quorums.ts', 'timers.ts', 'state-machine.ts',
  'journal.ts', 'pipeline.ts', 'request-queue.ts', 'client-table.ts', 'view-change-state.ts', 'state-transfer-state.ts',
  'superblock-state.ts', 'repair-state.ts', 'forwarding-state.ts', 'hand-back-state.ts', 'core.ts',
];

/** Entry points of @shoal/consensus that production code must never import. */
export const TEST_ONLY_ENTRY_POINTS: readonly string[] = ['@shoal/consensus/testing'];
