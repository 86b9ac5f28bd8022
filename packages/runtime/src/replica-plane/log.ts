/**
 * The replica plane logs through this narrow interface. The runtime's `Logger`
 * (packages/runtime/src/log/logger.ts) satisfies it structurally; tests pass a recorder.
 * Untrusted input is logged as a reason string and counters, never as raw bytes.
 */
export type ReplicaPlaneLogFields = Readonly<Record<string, string | number | boolean | bigint | null>>;

export interface ReplicaPlaneLog {
  debug(msg: string, fields?: ReplicaPlaneLogFields): void;
  info(msg: string, fields?: ReplicaPlaneLogFields): void;
  warn(msg: string, fields?: ReplicaPlaneLogFields): void;
  error(msg: string, fields?: ReplicaPlaneLogFields): void;
}

const ignore = (): void => undefined;

/** Discards everything. */
export const SILENT_LOG: ReplicaPlaneLog = Object.freeze({ debug: ignore, info: ignore, warn: ignore, error: ignore });
