// Where the smallest and largest values of rows [i, j) of a column lie, for
// the chart (chart.h): over values (floats or doubles; missing rows and NaN
// skipped) or over decimal mantissas, whose order is the values' order. Of
// equal values, the first row. Vector loops where the CPU has them (SSE2
// always on x86-64; SSE4.2 for 64-bit integers, chosen at load time, and
// not taken under MERIDIAN_NATIVE_PORTABLE=1, so that tests reach the plain
// loops too).
#pragma once

#include <cstdint>

namespace meridian {

/** Rows of the minimum and the maximum; -1 when no row has a value. */
struct Extremes {
  int64_t min = -1, max = -1;
};

/** Over float (T = float) or double values; `missing` (a byte a row) may be null. */
template <typename T>
Extremes ValueExtremes(const void* values, const uint8_t* missing, uint32_t i, uint32_t j);

/** Over decimal mantissas (every row holding one). */
Extremes MantissaExtremes(const int64_t* n, uint32_t i, uint32_t j);

}  // namespace meridian
