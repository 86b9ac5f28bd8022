/**
 * The replica-plane transport (docs/replica-plane.md): everything between a socket and a stream
 * of validated consensus frames for a peer.
 *
 *   const plane = await ReplicaPlane.start({ config, onPeerFrames, onPeerUp, onPeerDown, log });
 *   plane.send(peer, frame);            // bounded per-peer queue; 'queue_full' drops
 *   await plane.stop();
 *
 * Plaintext hand-off to a worker: pass `handOff`, post the package, and on the worker
 * `adoptHandedOff(pkg)` + `new PeerConnection({ socket, leftover, ... }).start()`.
 */
export {
  ReplicaPlane,
  INBOUND_HANDSHAKES_MAX,
  type PeerDirection,
  type PeerUpInfo,
  type HandshakeRefusedInfo,
  type PlaneSendOutcome,
  type ReplicaPlaneHooks,
  type ReplicaPlaneSource,
  type ReplicaPlaneOptions,
  type PeerStats,
  type ReplicaPlaneStats,
} from './plane.js';
export {
  replicaPlaneSettingsFrom,
  deriveIdentity,
  SELF_SIGNED_DIR_NAME,
  REPLICA_COUNT_MAX,
  type PeerAddress,
  type ReplicaPlaneSettings,
  type ReplicaPlaneTlsSettings,
  type ReplicaPlaneIdentity,
} from './settings.js';
export { ReplicaPlaneError, type ReplicaPlaneErrorCode } from './errors.js';
export { SILENT_LOG, type ReplicaPlaneLog, type ReplicaPlaneLogFields } from './log.js';
export {
  LINK_HAND_OFF_BYTES,
  LINK_OWNED,
  LINK_VIEW,
  PeerConnection,
  WRITE_BATCH_BYTES_MAX,
  type LinkFrame,
  type PeerConnectionOptions,
  type PeerConnectionStats,
  type PeerCloseReason,
  type SendOutcome,
} from './peer-connection.js';
export { detachForHandOff, adoptHandedOff, flushWrites, parkedHandOffCount, type HandOffPackage } from './handoff.js';
export { AcceptorHandshake, type AcceptorHandshakeParams } from './handshake-acceptor.js';
export { DialerHandshake, type DialerHandshakeParams } from './handshake-dialer.js';
export { type HandshakeMachine, type HandshakeStep, type HandshakeRefusal, refusalOfStatus } from './handshake-step.js';
export { runHandshake, type HandshakeResult } from './handshake-socket.js';
export { HandshakeFrameReader, HANDSHAKE_FRAME_SIZE_MAX } from './handshake-reader.js';
export { Deadline } from './deadline.js';
export { Dialer, REDIAL_BASE_MS, dialPeer, type DialerOptions, type DialPeerOptions, type DialTargetStats } from './dialer.js';
export { Acceptor, remoteOf, type AcceptorOptions } from './acceptor.js';
export type { InstallLink } from './events.js';
export { REPLICA_ALPN, loadReplicaTls, acceptTls, dialTls, tlsExporter, type ReplicaTlsMaterial, type TlsResult } from './tls.js';
export { loadOrCreateSelfSigned, SELF_SIGNED_CERT_FILE, SELF_SIGNED_KEY_FILE, type SelfSignedCertificate } from './self-signed.js';
export {
  generateCertificateKeyPair,
  issueCertificateDer,
  certificatePem,
  privateKeyPem,
  keyIdentifier,
  type CertificateKeyPair,
  type CertificateSubject,
  type CertificateIssuer,
  type CertificateRequest,
} from './x509.js';
