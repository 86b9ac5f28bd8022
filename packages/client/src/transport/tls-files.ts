import { readFileSync } from 'node:fs';

/** The PEM CA file a connection string names (`tls_ca_file`), read once when the client is built. */
export function readCaFile(path: string): Buffer {
  return readFileSync(path);
}
