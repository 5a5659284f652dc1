#include "extremes.h"

#include "cpu.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>

namespace meridian {
namespace {

template <typename T, bool kAnyMissing>
Extremes Scan(const T* v, const uint8_t* missing, uint32_t i, uint32_t j) {
  Extremes e;
  uint32_t k = i;
  while (k < j && ((kAnyMissing && missing[k]) || std::isnan(v[k]))) k++;
  if (k == j) return e;
  T lo = v[k], hi = v[k];
  e.min = e.max = k;
  for (k++; k < j; k++) {
    if (kAnyMissing && missing[k]) continue;
    const T x = v[k];  // NaN compares false both ways: skipped
    if (x < lo) lo = x, e.min = k;
    if (x > hi) hi = x, e.max = k;
  }
  return e;
}

#if defined(__SSE2__)
// Without missing values, two vector passes instead of one scalar pass whose
// every step waits on the last (about three times faster on W1): the
// smallest and largest values (minps/maxps keep the accumulator when the
// value is NaN, so NaN is skipped as in Scan), then the first row equal to
// each. Equal includes -0 == +0, as Scan's comparisons do.
struct Sse {
  static __m128 Min(__m128 a, __m128 b) { return _mm_min_ps(a, b); }
  static __m128d Min(__m128d a, __m128d b) { return _mm_min_pd(a, b); }
  static __m128 Max(__m128 a, __m128 b) { return _mm_max_ps(a, b); }
  static __m128d Max(__m128d a, __m128d b) { return _mm_max_pd(a, b); }
  static __m128 Load(const float* p) { return _mm_loadu_ps(p); }
  static __m128d Load(const double* p) { return _mm_loadu_pd(p); }
  static __m128 Splat(float x) { return _mm_set1_ps(x); }
  static __m128d Splat(double x) { return _mm_set1_pd(x); }
  static void Store(float* p, __m128 v) { _mm_storeu_ps(p, v); }
  static void Store(double* p, __m128d v) { _mm_storeu_pd(p, v); }
  static int Equal(__m128 a, __m128 b) { return _mm_movemask_ps(_mm_cmpeq_ps(a, b)); }
  static int Equal(__m128d a, __m128d b) { return _mm_movemask_pd(_mm_cmpeq_pd(a, b)); }
};

template <typename T>
int64_t FirstEqual(const T* v, uint32_t i, uint32_t j, T x) {
  constexpr uint32_t kLanes = 16 / sizeof(T);
  const auto target = Sse::Splat(x);
  uint32_t k = i;
  for (; k + kLanes <= j; k += kLanes) {
    const int hits = Sse::Equal(Sse::Load(v + k), target);
    if (hits != 0) return k + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
  for (; k < j; k++)
    if (v[k] == x) return k;
  return -1;
}

template <typename T>
Extremes ScanPresent(const T* v, uint32_t i, uint32_t j) {
  constexpr uint32_t kLanes = 16 / sizeof(T);
  constexpr T kInf = std::numeric_limits<T>::infinity();
  auto lo = Sse::Splat(kInf), hi = Sse::Splat(-kInf);
  uint32_t k = i;
  for (; k + kLanes <= j; k += kLanes) {
    const auto x = Sse::Load(v + k);
    lo = Sse::Min(x, lo);  // x when x < lo; lo when x is NaN
    hi = Sse::Max(x, hi);
  }
  T los[kLanes], his[kLanes];
  Sse::Store(los, lo);
  Sse::Store(his, hi);
  T a = kInf, b = -kInf;
  for (uint32_t q = 0; q < kLanes; q++) {
    if (los[q] < a) a = los[q];
    if (his[q] > b) b = his[q];
  }
  for (; k < j; k++) {
    if (v[k] < a) a = v[k];
    if (v[k] > b) b = v[k];
  }
  // All NaN: neither infinity is there, and no row is equal.
  return {FirstEqual(v, i, j, a), FirstEqual(v, i, j, b)};
}
#endif

}  // namespace

template <typename T>
Extremes ValueExtremes(const void* values, const uint8_t* missing, uint32_t i, uint32_t j) {
  const T* v = static_cast<const T*>(values);
  if (missing) return Scan<T, true>(v, missing, i, j);
#if defined(__SSE2__)
  return ScanPresent(v, i, j);
#else
  return Scan<T, false>(v, nullptr, i, j);
#endif
}

namespace {

// Mantissas are in the values' order (the encoder keeps one only where it
// reads back as the value, and FromDecimal is monotonic): compared as they
// are, without turning them into values first.
Extremes ScanMantissasPlain(const int64_t* n, uint32_t i, uint32_t j) {
  int64_t lo = n[i], hi = n[i];
  Extremes e{i, i};
  for (uint32_t k = i + 1; k < j; k++) {
    const int64_t x = n[k];
    if (x < lo) lo = x, e.min = k;
    if (x > hi) hi = x, e.max = k;
  }
  return e;
}

#if defined(__x86_64__)
// The same in two vector passes (SSE4.2 has the 64-bit comparison SSE2 lacks):
// the smallest and largest mantissas, then the first row holding each.

/** The first row of [i, j) holding x, or -1. */
__attribute__((target("sse4.2"))) int64_t FirstEqual64(const int64_t* n, uint32_t i, uint32_t j,
                                                       int64_t x) {
  const __m128i target = _mm_set1_epi64x(x);
  uint32_t k = i;
  for (; k + 2 <= j; k += 2) {
    const int hits = _mm_movemask_pd(_mm_castsi128_pd(
        _mm_cmpeq_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(n + k)), target)));
    if (hits != 0) return k + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
  for (; k < j; k++)
    if (n[k] == x) return k;
  return -1;
}

__attribute__((target("sse4.2"))) Extremes ScanMantissasSse42(const int64_t* n, uint32_t i,
                                                              uint32_t j) {
  // Four pairs of accumulators, so that no step waits on the one before.
  __m128i lo[4], hi[4];
  for (int q = 0; q < 4; q++) lo[q] = hi[q] = _mm_set1_epi64x(n[i]);
  uint32_t k = i;
  for (; k + 8 <= j; k += 8) {
    for (int q = 0; q < 4; q++) {
      const __m128i x =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(n + k + 2 * static_cast<size_t>(q)));
      lo[q] = _mm_blendv_epi8(lo[q], x, _mm_cmpgt_epi64(lo[q], x));
      hi[q] = _mm_blendv_epi8(hi[q], x, _mm_cmpgt_epi64(x, hi[q]));
    }
  }
  int64_t a = n[i], b = n[i];
  for (int q = 0; q < 4; q++) {
    int64_t los[2], his[2];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(los), lo[q]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(his), hi[q]);
    a = std::min({a, los[0], los[1]});
    b = std::max({b, his[0], his[1]});
  }
  for (; k < j; k++) a = std::min(a, n[k]), b = std::max(b, n[k]);
  return {FirstEqual64(n, i, j, a), FirstEqual64(n, i, j, b)};
}
#endif

}  // namespace

Extremes MantissaExtremes(const int64_t* n, uint32_t i, uint32_t j) {
#if defined(__x86_64__)
  if (UseSse42()) return ScanMantissasSse42(n, i, j);
#endif
  return ScanMantissasPlain(n, i, j);
}

template Extremes ValueExtremes<float>(const void*, const uint8_t*, uint32_t, uint32_t);
template Extremes ValueExtremes<double>(const void*, const uint8_t*, uint32_t, uint32_t);

}  // namespace meridian
