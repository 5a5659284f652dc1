// D51, D69: Arrow's message headers are flatbuffers, and the flatbuffers
// library apache-arrow reads them with trusts every length it finds: a vector
// that claims 2^28 entries in a 536-byte header made apache-arrow build
// 2^28 field objects until the process ran out of heap (found by the
// upload fuzz test). The library has no verifier in JavaScript, so every
// vector's length is checked here against the bytes that hold it: each
// entry takes at least one byte, so a length past the buffer is corrupt, and
// reading it throws (the upload is then a 400) instead of looping on it.
import { ByteBuffer } from "flatbuffers";

const GUARDED = Symbol.for("meridian.flatbuffers.bounded");

type Guarded = typeof ByteBuffer.prototype & { [GUARDED]?: true };

/** Installs the check once for the process (apache-arrow and this module share the one flatbuffers). */
export function boundFlatbufferVectors(): void {
  const proto = ByteBuffer.prototype as Guarded;
  if (proto[GUARDED]) return;
  proto.__vector_len = function (this: ByteBuffer, offset: number): number {
    // As the library reads it: the vector's length is the word at the offset the word at `offset` points to.
    const n = this.readInt32(offset + this.readInt32(offset));
    const start = offset + this.readInt32(offset) + 4;
    if (n < 0 || start < 0 || start + n > this.capacity()) {
      throw new RangeError(`a flatbuffer vector claims ${n} entries past the end of its ${this.capacity()}-byte header`);
    }
    return n;
  };
  proto[GUARDED] = true;
}
