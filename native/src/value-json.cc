#include "value-json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

#include "decimal.h"

namespace meridian {
namespace {

// Widest cell: a double such as -2.2250738585072014e-308 (24 characters).
constexpr size_t kMaxCell = 25;
// ["yyyy-MM-ddTHH:mm:ss"] and a comma.
constexpr size_t kRowFrame = 25;

// Howard Hinnant's civil_from_days: proleptic Gregorian date of a day count since 1970-01-01.
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

// "00" to "99": digits are written two at a time from this table.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline void Two(unsigned v, char* p) { std::memcpy(p, kDigitPairs + size_t{2} * v, 2); }

/** The decimal digits of n, right-aligned to end; returns where they start. */
inline char* Digits(uint64_t n, char* end) {
  while (n >= 100) {
    end -= 2;
    Two(static_cast<unsigned>(n % 100), end);
    n /= 100;
  }
  if (n >= 10) {
    end -= 2;
    Two(static_cast<unsigned>(n), end);
  } else {
    *--end = static_cast<char>('0' + n);
  }
  return end;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/** The day part "yyyy-MM-ddT" is the same for 86,400 seconds in a row: kept and reused. */
class TimestampWriter {
 public:
  void Write(int64_t t, char* p) {
    int64_t day = FloorDiv(t, 86400);
    if (day != day_) {
      day_ = day;
      int64_t y;
      unsigned m, d;
      CivilFromDays(day, &y, &m, &d);
      Two(static_cast<unsigned>(y / 100), date_);
      Two(static_cast<unsigned>(y % 100), date_ + 2);
      date_[4] = '-';
      Two(m, date_ + 5);
      date_[7] = '-';
      Two(d, date_ + 8);
      date_[10] = 'T';
    }
    auto s = static_cast<unsigned>(t - day * 86400);
    std::memcpy(p, date_, 11);
    Two(s / 3600, p + 11);
    p[13] = ':';
    Two(s / 60 % 60, p + 14);
    p[16] = ':';
    Two(s % 60, p + 17);
  }

 private:
  int64_t day_ = INT64_MIN;
  char date_[11];
};

template <typename T>
struct Shortest;
// A decimal of at most `kDigits` significant digits that reads back as T
// (by FromDecimal, the codec's rule) is the only one of its length that does
// (FLT_DIG, DBL_DIG), so it is the shortest.
template <>
struct Shortest<float> {
  static constexpr int kDigits = 6;
  static constexpr int kMaxExponent = 7;
};
template <>
struct Shortest<double> {
  static constexpr int kDigits = 15;
  static constexpr int kMaxExponent = 15;
};

/**
 * The common case fast: a value with a fraction and a non-zero integer part
 * that is a short decimal (12.345). Tries the column's last exponent first.
 * Writes what WriteShortest would, or returns nullptr to leave the value to it.
 */
template <typename T>
char* WriteDecimal(T v, int* hint, char* p) {
  using S = Shortest<T>;
  const double a = std::fabs(static_cast<double>(v));
  if (!(a >= 1 && a < kPow10[S::kDigits - 1])) return nullptr;
  for (int attempt = -1; attempt <= S::kMaxExponent; attempt++) {
    int e = attempt < 0 ? *hint : attempt;
    if (attempt == *hint) continue;
    double x = a * kPow10[e];
    if (!(x < kPow10[S::kDigits])) return nullptr;  // more digits than the fast path takes
    // 1 <= x < 2^53, where x + 0.5 rounds exactly; llround would cost a call here.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    auto n = static_cast<int64_t>(x + 0.5);
    if (FromDecimal<T>(n, e) != static_cast<T>(a)) continue;
    *hint = e;
    while (e > 0 && n % 10 == 0) {
      n /= 10;
      e--;
    }
    if (e == 0) return nullptr;  // a whole number: left to the general rule
    char digits[20];
    const char* d = Digits(static_cast<uint64_t>(n), digits + sizeof digits);
    const int whole = static_cast<int>(digits + sizeof digits - d) - e;  // > 0, as a >= 1
    if (v < 0) *p++ = '-';
    std::memcpy(p, d, whole);
    p[whole] = '.';
    std::memcpy(p + whole + 1, d + whole, e);
    return p + whole + 1 + e;
  }
  return nullptr;
}

/**
 * The shortest digits that read back as v (std::to_chars, scientific), laid
 * out as ECMAScript's Number::toString does: plain notation for decimal
 * exponents -7 < n <= 21, scientific beyond. So a Double prints exactly as
 * JSON.stringify prints it, and a Single as the same rule over its own
 * shortest digits (a large integer-valued float prints its shortest digits
 * padded with zeros, never extra digits).
 */
template <typename T>
char* WriteShortest(T v, char* p) {
  char sci[40];
  char* end = std::to_chars(sci, sci + sizeof sci, v, std::chars_format::scientific).ptr;
  const char* q = sci;
  if (*q == '-') {
    *p++ = '-';
    q++;
  }
  char digits[24];
  int k = 0;
  for (; *q != 'e'; q++)
    if (*q != '.') digits[k++] = *q;
  int exponent = 0;
  std::from_chars(q + 1 + (q[1] == '+'), end, exponent);
  const int n = exponent + 1;  // digits before the decimal point
  if (k <= n && n <= 21) {
    std::memcpy(p, digits, k);
    std::memset(p + k, '0', n - k);
    return p + n;
  }
  if (0 < n && n <= 21) {
    std::memcpy(p, digits, n);
    p[n] = '.';
    std::memcpy(p + n + 1, digits + n, k - n);
    return p + k + 1;
  }
  if (-6 < n && n <= 0) {
    p[0] = '0';
    p[1] = '.';
    std::memset(p + 2, '0', -n);
    std::memcpy(p + 2 - n, digits, k);
    return p + 2 - n + k;
  }
  *p++ = digits[0];
  if (k > 1) {
    *p++ = '.';
    std::memcpy(p, digits + 1, k - 1);
    p += k - 1;
  }
  *p++ = 'e';
  *p++ = n - 1 < 0 ? '-' : '+';
  return std::to_chars(p, p + 4, n - 1 < 0 ? 1 - n : n - 1).ptr;
}

template <typename T>
char* WriteFloat(T v, int* hint, char* p) {
  if (!std::isfinite(v)) {
    // JSON bytes, written without a terminator.
    std::memcpy(p, "null", 4);  // NOLINT(bugprone-not-null-terminated-result)
    return p + 4;
  }
  if (char* q = WriteDecimal(v, hint, p)) return q;
  return WriteShortest(v, p);
}

char* WriteInt(int32_t v, char* p) {
  if (v >= 0 && v < 10) {  // flags are mostly small ids
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  return std::to_chars(p, p + kMaxCell, v).ptr;
}

}  // namespace

char* TextBuffer::Reserve(size_t n) {
  if (size_ + n > capacity_) {
    size_t capacity = std::max(size_ + n, capacity_ * 2);
    std::unique_ptr<char[]> grown(new char[capacity]);
    if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }
  return data_.get() + size_;
}

JsonRowsWriter::JsonRowsWriter(const uint8_t* data, size_t size, int64_t from, int64_t to,
                               uint32_t maxRows, bool first)
    : block_(data, size), range_(block_.Select(from, to, maxRows)), first_(first) {}

size_t JsonRowsWriter::bound() const {
  return static_cast<size_t>(range_.stop - range_.begin) *
         (kRowFrame + block_.header().columns * (kMaxCell + 1));
}

size_t JsonRowsWriter::Write(char* out) const {
  const BlockHeader& h = block_.header();
  const double* ts = block_.timestamps();
  const uint32_t begin = range_.begin, stop = range_.stop;
  char* p = out;
  TimestampWriter clock;
  int hints[kMaxColumns];
  std::fill(hints, hints + h.columns, 3);
  for (uint32_t i = begin; i < stop; i++) {
    if (!first_ || i != begin) *p++ = ',';
    p[0] = '[';
    p[1] = '"';
    clock.Write(static_cast<int64_t>(ts[i]), p + 2);
    p[21] = '"';
    p += 22;
    for (uint8_t c = 0; c < h.columns; c++) {
      *p++ = ',';
      if (block_.Missing(c, i)) {
        // JSON bytes, written without a terminator.
        std::memcpy(p, "null", 4);  // NOLINT(bugprone-not-null-terminated-result)
        p += 4;
        continue;
      }
      switch (h.kinds[c]) {
        case FieldKind::kSingle:
          p = WriteFloat(static_cast<const float*>(block_.column(c).values)[i], &hints[c], p);
          break;
        case FieldKind::kDouble:
          p = WriteFloat(static_cast<const double*>(block_.column(c).values)[i], &hints[c], p);
          break;
        case FieldKind::kFlag:
          p = WriteInt(static_cast<const int32_t*>(block_.column(c).values)[i], p);
          break;
      }
    }
    *p++ = ']';
  }
  return static_cast<size_t>(p - out);
}

Taken WriteBlockJson(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows,
                     bool first, TextBuffer& out) {
  const JsonRowsWriter writer(data, size, from, to, maxRows, first);
  if (writer.taken().rows == 0) return writer.taken();
  char* p = out.Reserve(writer.bound());
  out.Commit(p + writer.Write(p));
  return writer.taken();
}

}  // namespace meridian
