/**
 * The end of an event-loop turn, scheduled once however many events dirtied it. Work that must
 * happen once per turn (group commit: `driver.flush()` of every driver touched; publishing the
 * ring producers) runs in one `setImmediate` after the I/O callbacks of the turn, so a burst of
 * requests read in one turn costs one fdatasync and one ring publish.
 */
export class Turn {
  readonly #end: () => void;
  #scheduled = false;

  constructor(end: () => void) {
    this.#end = end;
  }

  /** Something happened that the end of this turn must flush. */
  touch(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#end();
    });
  }
}
