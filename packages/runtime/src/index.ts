/**
 * @shoal/runtime: Node I/O for a Shoal node. `runNode` boots one node (supervisor + workers) from
 * a validated configuration; the configuration module is also available alone as
 * `@shoal/runtime/config` (no top-level await, safe to `require()` from a CommonJS launcher).
 * See docs/runtime.md.
 */
export * from './config/index.js';
export { runNode, Supervisor, SHOAL_VERSION, type SupervisorOptions } from './node/supervisor.js';
export { FatalReason, exitCodeOf, isFatalReason } from './node/exit-codes.js';
export { createLogger, Logger, LogFilter, type LogSink, type LogFields } from './log/logger.js';
export { shardOfGroup, murmur3OfU64 } from './shard/shard-of.js';
export { renderMetrics, type NodeMetricsInput } from './metrics/prometheus.js';
export type { ThreadStats, GroupStats, HeapStats } from './metrics/thread-stats.js';
export { hashPassword, verifyPassword, SCRYPT_PARAMS, type ScryptParams } from './pool/password-hash.js';
export { StatusTable, type StatusTableHandle } from './status/status-table.js';
export { EnvelopeEncoder, decodeMessage } from './channels/envelope.js';
export type { ChannelMessage, ChannelMessageKind } from './channels/messages.js';
export { makeToken, tokenShard, tokenSlot, tokenGeneration } from './client-plane/token.js';
export { loadClientTls, ClientTlsError, CLIENT_TLS_DIR, CLIENT_TLS_CERT_FILE, CLIENT_TLS_KEY_FILE, type ClientTlsMaterial } from './client-plane/tls.js';
export { certificatePem, generateCertificateKeyPair, issueCertificateDer, privateKeyPem, type CertificateKeyPair } from './replica-plane/x509.js';
