export {
  type DoorbellHandle, type RingHandle, type RingOptions, RingConfigError, createDoorbell, createRing,
} from './handle.js';
export {
  CACHE_LINE_BYTES, CAPACITY_BYTES_MAX, CAPACITY_BYTES_MIN, DOORBELL_BYTES, RECORD_HEADER_BYTES, RING_HEADER_BYTES,
  frameSizeLimit, recordBytes,
} from './layout.js';
export { type WaitResult } from './park.js';
export { type FlushStatus, type WriteOutcome, type WriteStatus, RingProducer } from './producer.js';
export { type ConsumerOptions, type FrameVisitor, type FrameVisitorInPlace, RingConsumer } from './consumer.js';
export { Inbox } from './inbox.js';
export { type Mesh, type MeshEndpoints, type MeshOptions, MESH_THREAD_COUNT_MAX, createMesh, meshBytes, meshEndpoints } from './mesh.js';
