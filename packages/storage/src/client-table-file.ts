/**
 * `<root>/metadata/client_table.ict2`: the client table in its ICT2 encoding (§7.6), written
 * durably by atomic replace. ICT2 carries its own XXH3 trailer, so a read verifies itself; the
 * bytes are produced and decoded by `@shoal/protocol` (`encodeClientTable`/`decodeClientTable`).
 *
 * This file is Shoal's: the reference keeps the checkpoint form of the table inside
 * `snapshot.bin`. Shoal also keeps the ICT2 form next to it so a state-transfer offer's
 * CLIENT_TABLE artifact and a post-install restart read the exact bytes that were installed.
 */
import { type DecodedClientTableEntry, decodeClientTable } from '@shoal/protocol';
import { type Disk, type IoResult, attempt, joinPath } from './disk.js';
import { readWholeFile, writeFileAtomic } from './durable-file.js';

export const CLIENT_TABLE_FILE_NAME = 'client_table.ict2';

export type ClientTableRead =
  | { readonly kind: 'missing' }
  | { readonly kind: 'ok'; readonly bytes: Uint8Array; readonly entries: readonly DecodedClientTableEntry[] }
  | { readonly kind: 'corrupt'; readonly reason: string };

export function classifyClientTable(bytes: Uint8Array | null): ClientTableRead {
  if (bytes === null) return { kind: 'missing' };
  const decoded = decodeClientTable(bytes);
  if (!decoded.ok) return { kind: 'corrupt', reason: decoded.reason };
  return { kind: 'ok', bytes, entries: decoded.value };
}

export class ClientTableFile {
  readonly #disk: Disk;
  readonly path: string;

  constructor(disk: Disk, metadataDir: string) {
    this.#disk = disk;
    this.path = joinPath(metadataDir, CLIENT_TABLE_FILE_NAME);
  }

  /** Durably replaces the file with ICT2 bytes (the caller encoded them). */
  write(ict2: Uint8Array): IoResult<void> {
    return attempt(() => writeFileAtomic(this.#disk, this.path, [ict2]));
  }

  read(): IoResult<ClientTableRead> {
    return attempt(() => {
      let verdict = classifyClientTable(readWholeFile(this.#disk, this.path));
      if (verdict.kind === 'corrupt') verdict = classifyClientTable(readWholeFile(this.#disk, this.path));
      return verdict;
    });
  }
}
