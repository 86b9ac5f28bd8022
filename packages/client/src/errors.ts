import {
  ErrorCode, EvictionReason, SDK_INCOMPATIBLE_PROTOCOL_VERSION, errorCodeInfo, errorCodeName, evictionReasonName,
  formatProtocolVersion, isRetriableErrorCode,
} from '@shoal/protocol';

/**
 * Every failure the SDK reports is a `ShoalError`: one class per kind of failure (undici style),
 * each with
 *
 *   code       the wire IggyError code (error-codes.json) the failure maps to: the server's own
 *              code for replies, the mapped code for evictions, the closest IggyError code for
 *              local failures (timeout 12001, connect 9, disconnect 8, shutdown 63, …)
 *   name       the class name, stable (`ShoalTimeoutError`, …)
 *   retriable  whether re-issuing the request may succeed (kafkajs habit): true for the two
 *              transient codes 57 / 58, for connection loss, connect failures, timeouts and
 *              session-level evictions; false for everything the server decided.
 *
 *   ShoalError
 *   ├─ ShoalResponseError        the server answered with a non-zero status or a committed rejection
 *   ├─ ShoalEvictionError        the server evicted the session (reason 1..15)
 *   ├─ ShoalTimeoutError         no reply within the request timeout
 *   ├─ ShoalAbortError           the caller's AbortSignal fired
 *   ├─ ShoalConnectionError      dialing failed (refused, unreachable, connect timeout)
 *   │  └─ ShoalConnectionLostError   an open connection closed with the request pending
 *   ├─ ShoalClosedError          the client / producer / consumer was closed
 *   ├─ ShoalProtocolError        the server sent bytes the SDK cannot decode
 *   ├─ ShoalInvalidArgumentError bad input (connection string, identifier, message, option)
 *   └─ ShoalRetryExhaustedError  retries / redirects ran out (wraps the last failure)
 */
export class ShoalError extends Error {
  override readonly name: string = 'ShoalError';
  readonly code: number;
  readonly retriable: boolean;

  constructor(message: string, code: number, retriable: boolean, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retriable = retriable;
  }

  /** The IggyError name of `code` (`StreamNameAlreadyExists`), or null for an unlisted code. */
  get codeName(): string | null {
    return errorCodeName(this.code);
  }
}

/** Where a server-decided failure came from (framing.mdx decode order). */
export type ResponseErrorSource = 'status' | 'result_section';

export class ShoalResponseError extends ShoalError {
  override readonly name = 'ShoalResponseError';
  /** `status`: refused before commit; `result_section`: a committed business rejection. */
  readonly source: ResponseErrorSource;
  /** The command code of the request that failed. */
  readonly command: number;

  constructor(code: number, source: ResponseErrorSource, command: number) {
    super(describeCode(code, command), code, isRetriableErrorCode(code));
    this.source = source;
    this.command = command;
  }
}

/**
 * Evictions that a fresh registration can cure (the session died, the credentials did not):
 * NoSession, SessionTooLow, StaleClient, SessionReleaseMismatch, SessionError. Credential and
 * protocol evictions are final.
 */
const RETRIABLE_EVICTIONS: ReadonlySet<number> = new Set([
  EvictionReason.NoSession, EvictionReason.SessionTooLow, EvictionReason.StaleClient,
  EvictionReason.SessionReleaseMismatch, EvictionReason.SessionError,
]);

export class ShoalEvictionError extends ShoalError {
  override readonly name = 'ShoalEvictionError';
  readonly reason: number;
  readonly reasonName: string;
  /** Accepted protocol window (packed), set only for reason 14. */
  readonly serverProtocolVersion: number;
  readonly serverProtocolVersionMin: number;

  constructor(code: number, reason: number, windowMax: number, windowMin: number) {
    const reasonName = evictionReasonName(reason) ?? `Reason${reason}`;
    const window = reason === EvictionReason.IncompatibleProtocol && windowMin > 0
      ? ` (server accepts ${formatProtocolVersion(windowMin)}..${formatProtocolVersion(windowMax)})`
      : '';
    const codeText = code === SDK_INCOMPATIBLE_PROTOCOL_VERSION ? 'incompatible protocol' : describeCode(code, null);
    super(`session evicted: ${reasonName}${window}: ${codeText}`, code, RETRIABLE_EVICTIONS.has(reason));
    this.reason = reason;
    this.reasonName = reasonName;
    this.serverProtocolVersion = windowMax;
    this.serverProtocolVersionMin = windowMin;
  }
}

export class ShoalTimeoutError extends ShoalError {
  override readonly name = 'ShoalTimeoutError';
  readonly timeoutMs: number;

  constructor(what: string, timeoutMs: number) {
    super(`${what} timed out after ${timeoutMs} ms`, ErrorCode.TaskTimeout, true);
    this.timeoutMs = timeoutMs;
  }
}

/** The caller aborted. `code` is 1 (Error): the IggyError table has no "cancelled". */
export class ShoalAbortError extends ShoalError {
  override readonly name = 'ShoalAbortError';

  constructor(reason?: unknown) {
    super(reason instanceof Error ? `aborted: ${reason.message}` : 'aborted', ErrorCode.Error, false, { cause: reason });
  }
}

export class ShoalConnectionError extends ShoalError {
  override readonly name: string = 'ShoalConnectionError';
  /** `host:port` of the node. */
  readonly address: string;

  constructor(message: string, address: string, options?: { readonly cause?: unknown; readonly code?: number }) {
    super(message, options?.code ?? ErrorCode.CannotEstablishConnection, true, options);
    this.address = address;
  }
}

export class ShoalConnectionLostError extends ShoalConnectionError {
  override readonly name = 'ShoalConnectionLostError';
  /**
   * True when the request had been written to the socket: the server may have applied it.
   * False when it never left the client (a retry cannot duplicate it).
   */
  readonly written: boolean;

  constructor(address: string, written: boolean, cause?: unknown) {
    super(`connection to ${address} lost${written ? ' with the request in flight' : ''}`, address, { cause, code: ErrorCode.Disconnected });
    this.written = written;
  }
}

export class ShoalClosedError extends ShoalError {
  override readonly name = 'ShoalClosedError';

  constructor(what = 'client') {
    super(`${what} is closed`, ErrorCode.ClientShutdown, false);
  }
}

export class ShoalProtocolError extends ShoalError {
  override readonly name = 'ShoalProtocolError';
  /** The decoder's reason (`result_section_truncated`, `frame_size_above_max`, …). */
  readonly reason: string;

  constructor(reason: string, detail?: string) {
    super(`protocol error: ${reason}${detail === undefined ? '' : ` (${detail})`}`, ErrorCode.InvalidCommand, false);
    this.reason = reason;
  }
}

export class ShoalInvalidArgumentError extends ShoalError {
  override readonly name = 'ShoalInvalidArgumentError';

  constructor(message: string, code: number = ErrorCode.InvalidConfiguration) {
    super(message, code, false);
  }
}

export type RetryExhaustedReason = 'attempts' | 'time' | 'redirects' | 'leaderless';

export class ShoalRetryExhaustedError extends ShoalError {
  override readonly name = 'ShoalRetryExhaustedError';
  readonly reason: RetryExhaustedReason;
  readonly attempts: number;
  readonly redirects: number;
  /** The failure of the last attempt (null when the cluster never had a leader to try). */
  readonly lastError: ShoalError | null;

  constructor(reason: RetryExhaustedReason, attempts: number, redirects: number, lastError: ShoalError | null) {
    const last = lastError === null ? '' : `: ${lastError.message}`;
    super(
      `gave up after ${attempts} attempt(s) and ${redirects} redirect(s) (${reason})${last}`,
      lastError?.code ?? ErrorCode.TransientNotAccepted,
      true,
      { cause: lastError ?? undefined },
    );
    this.reason = reason;
    this.attempts = attempts;
    this.redirects = redirects;
    this.lastError = lastError;
  }
}

function describeCode(code: number, command: number | null): string {
  const info = errorCodeInfo(code);
  const text = info === null ? `error ${code}` : `${info.name} (${code}): ${info.message.replace(/\s*\{\d\}/g, '').replace(/[:,]\s*$/, '')}`;
  return command === null ? text : `${text} [command ${command}]`;
}

/** Wraps anything thrown into a ShoalError (non-Shoal errors are our bug or the platform's). */
export function asShoalError(error: unknown): ShoalError {
  if (error instanceof ShoalError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ShoalError(message, ErrorCode.Error, false, { cause: error });
}
