// D51: what a cache lets go of is garbage that V8 frees only at its next full
// collection. Cached pages live long enough to reach the old generation, and
// with the server's small live heap V8 lets the old generation grow several
// times over before it collects, so a reader who asks listing after distinct
// listing (each kept, then evicted) moved the resident set by hundreds of
// megabytes although the cache itself stayed within its bound. A cache
// reports the bytes it drops here; once they add up to its bound, V8 is asked
// for a full collection (a task of its own, not inside the caller's request).
//
// And a buffer whose owner knows it is done with it can free its memory at
// once (freeNow), without waiting for V8 to find the buffer dead.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** ES2024's ArrayBuffer.prototype.transfer (Node has it; the project's TypeScript lib is ES2022). */
interface Transferable {
  transfer(newLength: number): ArrayBuffer;
}

type Collect = (options: { type: "major"; execution: "async" }) => Promise<void>;

let collect: Collect | undefined;

/** V8's gc() (--expose-gc), made available without the flag on the command line. */
function collector(): Collect {
  if (collect === undefined) {
    const exposed = (globalThis as { gc?: Collect }).gc;
    if (exposed !== undefined) collect = exposed;
    else {
      setFlagsFromString("--expose-gc");
      collect = runInNewContext("gc") as Collect;
    }
  }
  return collect;
}

/** Counts bytes let go of; past `threshold` since the last collection, asks for one. */
export class ReleasedBytes {
  private released = 0;
  private pending = false;

  constructor(private readonly threshold: number) {}

  add(bytes: number): void {
    if (bytes === 0) return;
    this.released += bytes;
    if (this.released < this.threshold || this.pending) return;
    this.released = 0;
    this.pending = true;
    void collector()({ type: "major", execution: "async" })
      .catch(() => {})
      .finally(() => (this.pending = false));
  }
}

/**
 * Frees the memory behind `buffer` now, when `buffer` is the whole of an
 * ArrayBuffer of its own (as better-sqlite3 and postgres.js give a blob of
 * more than a few KB): transferring it to a new length of 0 detaches it, and
 * V8 frees its backing store on the spot. A view of part of a larger buffer
 * (Node's shared pool of small buffers) is left alone. Every view of it reads
 * as empty afterwards: only for a buffer nothing else will read.
 */
export function freeNow(buffer: Uint8Array): void {
  const whole = buffer.buffer;
  if (!(whole instanceof ArrayBuffer) || buffer.byteOffset !== 0 || buffer.byteLength !== whole.byteLength) return;
  (whole as unknown as Transferable).transfer(0);
}
