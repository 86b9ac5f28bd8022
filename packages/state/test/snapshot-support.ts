export { encodeSnapshot, restoreSnapshot } from '../src/index.js';
export { unpackValue as unpackForTest } from '../src/msgpack.js';
