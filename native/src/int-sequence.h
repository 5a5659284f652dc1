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

/** Decodes exactly n values into out; a hostile section throws CorruptBlock. */
void DecodeInts(Reader& r, size_t n, int64_t* out);

}  // namespace meridian
