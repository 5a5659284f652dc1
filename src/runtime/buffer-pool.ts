// Reused buffers for streamed answers (D28, issue 30 item 7). A whole-range
// read used to make a fresh buffer of ~540 KB per block for its JSON; the
// garbage outran V8's collector, and the server's peak RSS grew with the
// range (98-196 MiB for 10M rows). Now the addon writes each block's answer
// (JSON rows, an Arrow record batch, a Parquet writer's pages) into a buffer
// taken from here, and the transport gives it back once the socket or the
// compressor has taken its bytes (releaseChunk). What one read holds is
// bounded by the transport's backpressure (a chunk in the socket, at most
// COMPRESSOR_AHEAD in a compressor), so the pool stays small; idle buffers
// beyond a few per size are left to the collector.

/** Smallest buffer handed out: answers of a few rows share it. */
const MIN_BYTES = 64 * 1024;
/** Idle buffers kept per size class. */
const IDLE_PER_CLASS = 8;

/** Free buffers by size class (log2 of their length). */
const idle = new Map<number, Uint8Array[]>();
/** Bytes of the buffers handed out and not given back (a chunk never sent is counted for ever). */
let held = 0;
/** The buffer behind each chunk handed out (a view of its start), to be given back. */
const owners = new WeakMap<Uint8Array, Uint8Array>();

function classOf(bytes: number): number {
  return Math.max(Math.ceil(Math.log2(Math.max(bytes, 1))), Math.log2(MIN_BYTES));
}

/** A buffer of at least `bytes`, reused when one is free. */
export function acquire(bytes: number): Uint8Array {
  const k = classOf(bytes);
  const free = idle.get(k);
  held += 2 ** k;
  // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool (which must not be reused).
  return free?.pop() ?? new Uint8Array(Buffer.allocUnsafeSlow(2 ** k).buffer);
}

/** Gives a buffer back (one that acquire() returned and nothing refers to any more). */
export function release(buffer: Uint8Array): void {
  const k = Math.log2(buffer.length);
  if (!Number.isInteger(k)) return;
  held -= buffer.length;
  let free = idle.get(k);
  if (!free) idle.set(k, (free = []));
  if (free.length < IDLE_PER_CLASS) free.push(buffer);
}

/** The first `length` bytes of `buffer` as a chunk to send; releaseChunk() gives `buffer` back once it is sent. */
export function pooledChunk(buffer: Uint8Array, length: number): Uint8Array {
  const chunk = buffer.subarray(0, length);
  owners.set(chunk, buffer);
  return chunk;
}

/**
 * Called by whoever wrote `chunk` out (the REST transport) once its bytes are
 * taken: a pooled chunk's buffer goes back to the pool; any other chunk is
 * left alone. A chunk never sent (the client left) is never released: the
 * collector takes its buffer.
 */
export function releaseChunk(chunk: Uint8Array): void {
  const buffer = owners.get(chunk);
  if (buffer === undefined) return;
  owners.delete(chunk);
  release(buffer);
}

/** Buffers idle in the pool and their bytes, and the bytes handed out and not given back (tests, benchmarks). */
export function poolStats(): { buffers: number; bytes: number; held: number } {
  let buffers = 0;
  let bytes = 0;
  for (const [k, free] of idle) {
    buffers += free.length;
    bytes += free.length * 2 ** k;
  }
  return { buffers, bytes, held };
}
