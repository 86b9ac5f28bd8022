/**
 * Refusals to START (configuration the replica plane cannot run with). Everything a peer sends
 * is a reason string instead (handshake refusals, frame drops), never an exception.
 */
export type ReplicaPlaneErrorCode =
  /** `cluster.tls.enabled` without `cluster.auth.enabled` (security.mdx: refuse to start). */
  | 'tls_requires_auth'
  /** Auth on with a shared secret shorter than 32 bytes, or a bad previous secret. */
  | 'auth_secret_invalid'
  /** CA mode without cert/key/CA files, or files that cannot be read. */
  | 'tls_material_invalid'
  /** Roster, self id, limits or listen address out of range. */
  | 'settings_invalid'
  /** The replica listener could not bind. */
  | 'listen_failed';

export class ReplicaPlaneError extends Error {
  override readonly name = 'ReplicaPlaneError';
  readonly code: ReplicaPlaneErrorCode;

  constructor(code: ReplicaPlaneErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.code = code;
  }
}
