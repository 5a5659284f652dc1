// Detachable buffers (D28): a buffer whose owner knows it is done with it frees its
// memory at once, without waiting for V8 to find it dead. The owners who call
// freeNow are the ones that got the buffer as their own and say when they are
// done: the block walk (a payload once the reader asks for the next block), the
// SQLite store (a blob it copied out of), the block cache (a chart's payloads
// and index not kept), the transport (zlib's output buffers once written).

/** ES2024's ArrayBuffer.prototype.transfer (Node has it; the project's TypeScript lib is ES2022). */
interface Transferable {
  transfer(newLength: number): ArrayBuffer;
}

function transferable(buffer: ArrayBufferLike): buffer is ArrayBuffer & Transferable {
  return buffer instanceof ArrayBuffer && "transfer" in buffer && typeof buffer.transfer === "function";
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
  if (!transferable(whole) || buffer.byteOffset !== 0 || buffer.byteLength !== whole.byteLength) return;
  whole.transfer(0);
}
