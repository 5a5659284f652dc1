// Writing a streamed answer into its compressor with a bounded lead (D28,
// D44). Waiting for 'drain' after each refused write, as pipe() does, waits
// until the compressor's queue is empty: it then sits idle while the next
// chunk is made, and making and compressing take turns on one core instead of
// running side by side (W1 1M whole range with zstd: 110 ms that way, 80 ms
// with a lead of 1 MiB). So the writer keeps up to `ahead` bytes queued, and
// waits for the oldest write to finish, not for all of them. It counts on
// write callbacks that come when `out` has taken the chunk, as a zlib stream's
// do once the chunk is compressed (and not while its output is unread); an
// HTTP response calls them before its socket has the bytes, so a socket is
// written by 'drain' instead.
import type { Writable } from "node:stream";

export class WriteAhead {
  #queued = 0;
  #wake: (() => void) | undefined;

  /**
   * @param out where the chunks go (a compressor)
   * @param gone whether the answer's reader has left (then nothing waits)
   * @param ahead bytes that may be queued in `out` before write() waits
   */
  constructor(
    private readonly out: Pick<Writable, "write">,
    private readonly gone: () => boolean,
    private readonly ahead: number,
  ) {}

  /**
   * Writes `chunk`; resolves once no more than `ahead` bytes are queued, or the reader is gone.
   * `done` is called once `out` has taken the chunk (its buffer may then be reused), or with
   * the error that stopped it (`out` was destroyed: what it did with the chunk is not known).
   */
  async write(chunk: Uint8Array, done?: (err?: Error | null) => void): Promise<void> {
    const n = chunk.length;
    this.#queued += n;
    // Callbacks come in write order, also with an error once `out` is destroyed.
    this.out.write(chunk, (err) => {
      this.#queued -= n;
      done?.(err);
      this.wake();
    });
    await this.#queuedAtMost(this.ahead);
  }

  /**
   * Resolves once every write is taken, or the reader is gone. A zlib stream ended
   * while writes still wait in it finishes its frame with the last of them and then
   * writes a second, empty one for the end itself (zstd: two frames, which one-frame
   * decoders such as Python's zstandard reject, D59); ended after this, it ends one.
   */
  settled(): Promise<void> {
    return this.#queuedAtMost(0);
  }

  async #queuedAtMost(bytes: number): Promise<void> {
    while (this.#queued > bytes && !this.gone()) await new Promise<void>((resolve) => (this.#wake = resolve));
  }

  /** Lets a waiting write() look again (a write finished, or the reader left). */
  wake(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /** Bytes written and not yet taken by `out`. */
  get queued(): number {
    return this.#queued;
  }
}
