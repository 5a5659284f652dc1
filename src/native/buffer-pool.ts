// Reused buffers for streamed answers (D28, issue 30 item 7). A whole-range
// read used to make a fresh buffer of ~540 KB per block for its JSON; the
// garbage outran V8's collector, and the server's peak RSS grew with the
// range (98-196 MiB for 10M rows). Now the addon writes each block's answer
// (JSON rows, an Arrow record batch, a Parquet writer's pages) into a buffer
// leased from here. A lease is owned: whoever holds it ends it exactly once,
// by release() (back to the pool, for a buffer nothing reads any more) or
// drop() (counted off and left to the collector, for one a socket may still
// read). A chunk cut from a lease carries it to the transport, whose
// ChunksInFlight ends it on every path: written, failed, never written, or
// the client gone mid-answer (issue 40). What one read holds is bounded by
// the transport's backpressure (a chunk in the socket, at most COMPRESSOR_AHEAD
// in a compressor), so the pool stays small; idle buffers beyond a few per
// size are left to the collector.
import type { IntoResult, Taken } from "./binding.js";

/** Smallest buffer handed out: answers of a few rows share it. */
const MIN_BYTES = 64 * 1024;
/** Idle buffers kept per size class. */
const IDLE_PER_CLASS = 8;

/** Free buffers by size class (log2 of their length). */
const idle = new Map<number, Uint8Array[]>();
/** Bytes of the buffers leased and not yet given back or dropped. */
let held = 0;
/** The lease behind each chunk cut from one (a view of its start). */
const leases = new WeakMap<Uint8Array, Lease>();

function classOf(bytes: number): number {
  return Math.max(Math.ceil(Math.log2(Math.max(bytes, 1))), Math.log2(MIN_BYTES));
}

/** A pooled buffer and the duty to end its lease once: release() or drop(). */
export class Lease {
  private live = true;

  /** Use lease(): a buffer of the pool's own size classes. */
  private constructor(readonly buffer: Uint8Array) {
    held += buffer.length;
  }

  /** A buffer of at least `bytes`, reused when one is free. */
  static take(bytes: number): Lease {
    const k = classOf(bytes);
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool (which must not be reused).
    return new Lease(idle.get(k)?.pop() ?? new Uint8Array(Buffer.allocUnsafeSlow(2 ** k).buffer));
  }

  /** The first `length` bytes as a chunk to send: the chunk carries this lease (ChunksInFlight ends it). */
  chunk(length: number): Uint8Array {
    const chunk = this.buffer.subarray(0, length);
    leases.set(chunk, this);
    return chunk;
  }

  /** Nothing reads the buffer any more: back to the pool. Once; later calls do nothing. */
  release(): void {
    if (!this.end()) return;
    const k = Math.log2(this.buffer.length);
    let free = idle.get(k);
    if (!free) idle.set(k, (free = []));
    if (free.length < IDLE_PER_CLASS) free.push(this.buffer);
  }

  /** Something may still read the buffer (a socket torn down mid-write): counted off, never reused, left to the collector. */
  drop(): void {
    this.end();
  }

  private end(): boolean {
    if (!this.live) return false;
    this.live = false;
    held -= this.buffer.length;
    return true;
  }
}

/** A buffer of at least `bytes` from the pool, its lease to be ended by its taker. */
export function lease(bytes: number): Lease {
  return Lease.take(bytes);
}

/** The lease a chunk was cut from, if it was (any other chunk is nobody's here). */
export function leaseOf(chunk: Uint8Array): Lease | undefined {
  return leases.get(chunk);
}

/**
 * The pooled chunks of one answer on their way out: the one place the
 * transport ends their leases. A chunk handed to the socket or compressor
 * goes back to the pool once written; one that failed or that the answer
 * never got to write is ended too; close() ends whatever is still out when
 * the answer is over (the client gone mid-answer): dropped, since a socket
 * torn down may still hold it. Other chunks pass untouched.
 */
export class ChunksInFlight {
  private readonly out = new Set<Lease>();

  /** `chunk` is handed to a writer; returns the write's callback, which ends its lease. */
  sent(chunk: Uint8Array): (err?: Error | null) => void {
    const l = leases.get(chunk);
    if (l === undefined) return NOTHING;
    this.out.add(l);
    return (err) => {
      this.out.delete(l);
      if (err) l.drop();
      else l.release();
    };
  }

  /** `chunk` will not be written (a HEAD, an answer given up before it): its buffer goes back at once. */
  unsent(chunk: Uint8Array): void {
    leases.get(chunk)?.release();
  }

  /** The answer is over: what is still out is dropped (its writer's callback, if it ever comes, then does nothing). */
  close(): void {
    for (const l of this.out) l.drop();
    this.out.clear();
  }
}

const NOTHING = (): void => {};

/** Rows an addon writer put into a pooled buffer, and what they took: a chunk carrying its lease. */
export type PooledRows = Taken & { out: Uint8Array };

/**
 * Runs a writer into a pooled buffer: the size asked last time first (blocks of
 * one read are alike), a larger one when the writer says it needs it.
 */
export class PooledWriter {
  private size = 0;

  write(into: (out: Uint8Array) => IntoResult): PooledRows {
    let l = lease(this.size);
    for (;;) {
      let r: IntoResult;
      try {
        r = into(l.buffer);
      } catch (e) {
        l.release(); // the writer is done with it either way
        throw e;
      }
      if ("written" in r) return { out: l.chunk(r.written), rows: r.rows, last: r.last, more: r.more };
      l.release();
      this.size = r.need;
      l = lease(r.need);
    }
  }
}

/** Buffers idle in the pool and their bytes, and the bytes leased and not yet given back (tests, benchmarks). */
export function poolStats(): { buffers: number; bytes: number; held: number } {
  let buffers = 0;
  let bytes = 0;
  for (const [k, free] of idle) {
    buffers += free.length;
    bytes += free.length * 2 ** k;
  }
  return { buffers, bytes, held };
}
