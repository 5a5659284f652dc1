// Integer sequences (decimal mantissas, flag ids) in whichever of three forms
// is smallest: frame of reference, delta frame of reference (smooth signals),
// or runs (flags that rarely change).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bytes.h"

namespace meridian {

enum class IntForm : uint8_t { kFrame = 0, kDelta = 1, kRuns = 2 };

/** Encodes n values; every value must lie within +-2^60, so ranges and deltas fit the packer. */
void EncodeInts(Writer& w, const int64_t* v, size_t n);

/**
 * An integer section located but not decoded (LocateInts): its form and
 * framing read and checked to lie inside the block, so that any rows of it
 * may be decoded later (DecodeIntsRange), as a chart decodes only the
 * segments of a block a bucket edge falls in (block-segments.h).
 */
struct IntSection {
  IntForm form = IntForm::kFrame;
  size_t n = 0;
  uint64_t first = 0;  // the delta form's first value
  uint64_t base = 0;   // the frame's minimum, or the smallest delta
  uint8_t width = 0;
  const uint8_t* packed = nullptr;
  Reader runs{nullptr, 0};  // the runs form: its runs, after the form byte
};

/** Reads a section of n values up to its end, checking its framing; throws CorruptBlock. The runs
 * themselves are checked when decoded. */
IntSection LocateInts(Reader& r, size_t n);

/**
 * Decodes values [lo, hi) of a located section into out[lo..hi) (out indexed
 * by row, as DecodeInts fills it). `at` is the value at row lo, which the
 * delta form cannot know without the rows before (the first value when lo is
 * 0); the other forms ignore it. A hostile section, or a value outside T,
 * throws CorruptBlock.
 */
template <typename T>
void DecodeIntsRange(const IntSection& s, size_t lo, size_t hi, uint64_t at, T* out);

/**
 * As DecodeIntsRange, for decimal mantissas: row i's value as FromDecimal(mantissa, e) into out[i],
 * in the same pass (no int64 array written and read again). Any int64 mantissa is a value.
 */
template <typename F>
void DecodeDecimalsRange(const IntSection& s, size_t lo, size_t hi, uint64_t at, uint8_t e, F* out);

/**
 * Decodes exactly n values into out (int32_t: flag ids, filled without a pass
 * through 64 bits; mantissas go through DecodeDecimalsRange); a hostile
 * section, or a value outside T, throws CorruptBlock.
 */
template <typename T>
void DecodeInts(Reader& r, size_t n, T* out);

/**
 * The runs of a section in the runs form, its form byte already read:
 * each(start, length, value) per run, in order; a hostile section (no run,
 * an empty one, runs past or short of n rows) throws CorruptBlock.
 */
template <typename Each>
void ReadRuns(Reader& r, size_t n, Each each) {
  const uint64_t runs = r.Varint();
  if (runs == 0 || runs > n) throw CorruptBlock("run count");
  size_t at = 0;
  for (uint64_t k = 0; k < runs; k++) {
    const int64_t value = r.SVarint();
    const uint64_t len = r.Varint();
    if (len == 0 || len > n - at) throw CorruptBlock("run length");
    each(at, static_cast<size_t>(len), value);
    at += len;
  }
  if (at != n) throw CorruptBlock("runs do not cover the block");
}

}  // namespace meridian
