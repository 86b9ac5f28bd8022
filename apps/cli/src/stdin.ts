/**
 * Standard input, read at most once and shared: the password prompt may take the first line of
 * piped input (`echo "$PASSWORD" | shoal -u admin message send s t`), and `message send` then reads
 * the rest as messages. One owner so neither loses bytes the other buffered.
 */
export type InputStream = NodeJS.ReadableStream & { readonly isTTY?: boolean };

export class StdinReader {
  readonly #stream: InputStream;
  #iterator: AsyncIterator<string | Buffer> | null = null;
  #buffered: Buffer = Buffer.alloc(0);
  #ended = false;

  constructor(stream: InputStream) {
    this.#stream = stream;
  }

  get isTTY(): boolean {
    return this.#stream.isTTY === true;
  }

  get stream(): InputStream {
    return this.#stream;
  }

  async #pull(): Promise<boolean> {
    if (this.#ended) return false;
    this.#iterator ??= (this.#stream as AsyncIterable<string | Buffer>)[Symbol.asyncIterator]();
    const next = await this.#iterator.next();
    if (next.done === true) {
      this.#ended = true;
      return false;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    return true;
  }

  /** The next line without its `\n` / `\r\n`, or null at the end of input. */
  async readLine(): Promise<string | null> {
    for (;;) {
      const newline = this.#buffered.indexOf(0x0a);
      if (newline >= 0) {
        const line = this.#buffered.subarray(0, newline).toString('utf8').replace(/\r$/, '');
        this.#buffered = this.#buffered.subarray(newline + 1);
        return line;
      }
      if (!(await this.#pull())) {
        if (this.#buffered.length === 0) return null;
        const line = this.#buffered.toString('utf8').replace(/\r$/, '');
        this.#buffered = Buffer.alloc(0);
        return line;
      }
    }
  }

  /** Everything not read yet. */
  async readAll(): Promise<Buffer> {
    while (await this.#pull());
    const all = this.#buffered;
    this.#buffered = Buffer.alloc(0);
    return all;
  }
}
