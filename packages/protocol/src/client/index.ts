/**
 * Client-plane codec: the three header shapes (request, reply, eviction), the operation and
 * command registries, the result section, protocol versioning and login, the shared encodings,
 * and a request/response codec for every command of commands.mdx.
 */
export * from './frame-prefix.js';
export * from './operation.js';
export * from './command-code.js';
export * from './request-header.js';
export * from './reply-header.js';
export * from './eviction-reason.js';
export * from './eviction-header.js';
export * from './result-section.js';
export * from './protocol-version.js';
export * from './login.js';
export * from './request-frame.js';
export * from './reply-frame.js';
export * from './encodings/index.js';
export * from './commands/index.js';
export {
  ErrorCode, ERROR_CODES, SERVER_ERROR_CODES, type ErrorCodeInfo, errorCodeInfo, errorCodeName, isKnownErrorCode,
  isRetriableErrorCode,
} from '../errors/error-codes.js';
