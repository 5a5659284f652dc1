// How a decimal n * 10^-e becomes a float or double. The codec stores values
// by this rule and checks each one reads back bit for bit through it; the
// JSON writer uses the same rule to find a value's short decimal.
#pragma once

#include <cstdint>

namespace meridian {

// Powers of ten, exact as doubles up to 1e22.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                             1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
constexpr double kInvPow10[] = {1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10};

/** n * 10^-e from n already a double (exact: |n| < 2^52). */
template <typename T>
T FromDouble(double n, int e);

// A multiplication: its rounding in double is far below float precision (and it has no division
// latency).
template <>
inline float FromDouble<float>(double n, int e) {
  return static_cast<float>(n * kInvPow10[e]);
}

// A division: correctly rounded, so n / 10^e is the double nearest the decimal, as a parser reads
// it.
template <>
inline double FromDouble<double>(double n, int e) {
  return n / kPow10[e];
}

template <typename T>
inline T FromDecimal(int64_t n, int e) {
  return FromDouble<T>(static_cast<double>(n), e);
}

}  // namespace meridian
