/**
 * `@shoal/consensus/testing`: access to a replica's core for tests and deep checkers. Hosts never
 * import it (test/tidy enforces it): they read `Replica.role` and the replica's other accessors.
 */
export { coreOf } from './replica.js';
export type { Core } from './core.js';
