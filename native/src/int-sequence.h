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
 * Decodes exactly n values into out (int64_t, or int32_t for flag ids, which
 * are then filled without a pass through 64 bits); a hostile section, or a
 * value outside T, throws CorruptBlock.
 */
template <typename T>
void DecodeInts(Reader& r, size_t n, T* out);

}  // namespace meridian
