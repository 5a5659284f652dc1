// D51: what a cache lets go of is garbage that V8 frees only at its next full
// collection. Cached pages live long enough to reach the old generation, and
// with the server's small live heap V8 lets the old generation grow several
// times over before it collects, so a reader who asks listing after distinct
// listing (each kept, then evicted) moved the resident set by hundreds of
// megabytes although the cache itself stayed within its bound. A cache
// reports the bytes it drops here; once they add up to its bound, V8 is asked
// for a full collection (a task of its own, not inside the caller's request).
//
// Kept for caches alone: a cache that lets go of an entry cannot say whether a
// reader still holds it (a chart in flight may hold a kept payload), so no
// owner can free it. A buffer whose owner knows it is done with it is freed by
// that owner instead (native/detach.ts freeNow).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

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
