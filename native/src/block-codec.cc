#include "block-codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "bytes.h"
#include "crc32c.h"
#include "decimal.h"
#include "int-sequence.h"

namespace meridian {
namespace {

enum class MissingForm : uint8_t { kNone = 0, kBitmap = 1, kAll = 2 };
enum class FloatScheme : uint8_t { kDecimal = 0, kRaw = 1 };

// Mantissas stay below 2^52: exact as doubles, and ranges and deltas fit the packer.
constexpr double kMantissaLimit = 4503599627370496.0;

// How a mantissa becomes a value again. The encoder checks every value with
// this same function, so whatever it computes is exact by construction.
template <typename T>
struct FloatTraits;
template <>
struct FloatTraits<float> {
  static constexpr uint8_t kMaxExponent = 10;
  using Bits = uint32_t;
  static float FromDecimal(int64_t n, uint8_t e) { return meridian::FromDecimal<float>(n, e); }
};
template <>
struct FloatTraits<double> {
  static constexpr uint8_t kMaxExponent = 18;
  using Bits = uint64_t;
  static double FromDecimal(int64_t n, uint8_t e) { return meridian::FromDecimal<double>(n, e); }
};

template <typename T>
bool SameBits(T a, T b) {
  typename FloatTraits<T>::Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x == y;
}

/** The decimal mantissa of v at exponent e, if v reads back bit for bit (so -0, NaN and Inf never
 * do). */
template <typename T>
bool ToDecimal(T v, uint8_t e, int64_t* mantissa) {
  double x = static_cast<double>(v) * kPow10[e];
  if (!(std::fabs(x) < kMantissaLimit)) return false;
  int64_t n = std::llround(x);
  if (!SameBits(FloatTraits<T>::FromDecimal(n, e), v)) return false;
  *mantissa = n;
  return true;
}

bool IsMissing(const uint8_t* missing, size_t i) { return missing != nullptr && missing[i] != 0; }

MissingForm WriteMissing(Writer& w, const uint8_t* missing, uint32_t rows) {
  size_t count = 0;
  if (missing)
    count = static_cast<size_t>(
        std::count_if(missing, missing + rows, [](uint8_t m) { return m != 0; }));
  MissingForm form = count == 0      ? MissingForm::kNone
                     : count == rows ? MissingForm::kAll
                                     : MissingForm::kBitmap;
  w.U8(static_cast<uint8_t>(form));
  if (form == MissingForm::kBitmap) {
    std::vector<uint8_t> bits((rows + 7) / 8, 0);
    for (uint32_t i = 0; i < rows; i++)
      if (missing[i]) bits[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
    w.Raw(bits.data(), bits.size());
  }
  return form;
}

/** The exponent that turns most of a sample of present values into exact decimals, and whether at
 * least half do. */
template <typename T>
std::pair<uint8_t, bool> BestExponent(const T* v, const uint8_t* missing, uint32_t rows) {
  constexpr size_t kSample = 256;
  size_t stride = std::max<size_t>(1, rows / kSample);
  size_t hits[FloatTraits<T>::kMaxExponent + 1] = {};
  size_t sampled = 0;
  for (size_t i = 0; i < rows; i += stride) {
    if (IsMissing(missing, i)) continue;
    sampled++;
    int64_t n;
    for (uint8_t e = 0; e <= FloatTraits<T>::kMaxExponent; e++) {
      if (ToDecimal(v[i], e, &n)) {
        hits[e]++;
        break;  // the smallest exponent that works is the one the full pass will use
      }
    }
  }
  // A value exact at exponent e is exact at every larger one (within range), so count cumulatively.
  uint8_t best = 0;
  size_t bestHits = 0, cumulative = 0;
  for (uint8_t e = 0; e <= FloatTraits<T>::kMaxExponent; e++) {
    cumulative += hits[e];
    if (cumulative > bestHits) {
      best = e;
      bestHits = cumulative;
    }
  }
  return {best, sampled > 0 && bestHits * 2 >= sampled};
}

template <typename T>
void WriteFloats(Writer& w, const T* v, const uint8_t* missing, uint32_t rows) {
  auto [e, decimal] = BestExponent(v, missing, rows);
  if (decimal) {
    std::vector<int64_t> mantissas(rows);
    std::vector<uint32_t> exceptions;
    int64_t previous = 0;
    for (uint32_t i = 0; i < rows; i++) {
      int64_t n =
          previous;  // missing and exceptional rows repeat the previous mantissa: cheapest to pack
      if (!IsMissing(missing, i) && !ToDecimal(v[i], e, &n)) exceptions.push_back(i);
      mantissas[i] = previous = n;
    }
    Writer d;
    d.U8(static_cast<uint8_t>(FloatScheme::kDecimal));
    d.U8(e);
    EncodeInts(d, mantissas.data(), rows);
    d.Varint(exceptions.size());
    int64_t at = -1;
    for (uint32_t i : exceptions) {
      d.Varint(static_cast<uint64_t>(i - at));
      d.Raw(&v[i], sizeof(T));
      at = i;
    }
    if (d.size() < 1 + sizeof(T) * rows) {
      w.Raw(d.data(), d.size());
      return;
    }
  }
  // Not decimal data (noise, NaN-heavy): stored as is.
  w.U8(static_cast<uint8_t>(FloatScheme::kRaw));
  w.Raw(v, sizeof(T) * rows);
}

void WriteFlags(Writer& w, const int32_t* v, const uint8_t* missing, uint32_t rows) {
  std::vector<int64_t> ids(rows);
  int64_t previous = 0;
  for (uint32_t i = 0; i < rows; i++) ids[i] = previous = IsMissing(missing, i) ? previous : v[i];
  EncodeInts(w, ids.data(), rows);
}

void WriteTimestamps(Writer& w, const int64_t* t, uint32_t rows) {
  if (rows == 1) return;
  // The step is the most common delta among the first ones; every other delta is an exception.
  std::vector<int64_t> sample;
  for (uint32_t i = 1; i < rows && sample.size() < 64; i++) sample.push_back(t[i] - t[i - 1]);
  std::sort(sample.begin(), sample.end());
  int64_t step = sample[0];
  size_t bestRun = 0;
  for (size_t i = 0; i < sample.size();) {
    size_t j = i;
    while (j < sample.size() && sample[j] == sample[i]) j++;
    if (j - i > bestRun) {
      bestRun = j - i;
      step = sample[i];
    }
    i = j;
  }
  std::vector<uint32_t> exceptions;
  for (uint32_t i = 1; i < rows; i++)
    if (t[i] - t[i - 1] != step) exceptions.push_back(i);
  w.SVarint(step);
  w.Varint(exceptions.size());
  uint32_t at = 0;
  for (uint32_t i : exceptions) {
    w.Varint(i - at);
    w.SVarint(t[i] - t[i - 1] - step);
    at = i;
  }
}

/**
 * Every reader relies on strictly ascending timestamps (range search, and the
 * columns writer sizes its output from them), and a hostile block with a valid
 * checksum can decode out of order. One branch-free pass over the rows.
 */
void RequireAscending(const double* ts, uint32_t rows) {
  bool bad = false;
  for (uint32_t i = 1; i < rows; i++) bad |= !(ts[i] > ts[i - 1]);
  if (bad) throw CorruptBlock("timestamps not ascending");
}

/**
 * A hostile block with a valid checksum can decode to any 64-bit seconds, and
 * the readers write dates of years 0001..9999 only (value-json.cc indexes a
 * digit table by century). Ascending already, so the first and last bound all.
 */
void RequireD24(const double* ts, uint32_t rows) {
  if (!(ts[0] >= static_cast<double>(kMinTimestamp) &&
        ts[rows - 1] <= static_cast<double>(kMaxTimestamp))) {
    throw CorruptBlock("timestamp outside 0001..9999");
  }
}

/**
 * Whether a block's timestamps, first and then `step` apart with no
 * exception, are strictly ascending inside D24: so a reader needs neither
 * the check pass nor, for the scan, the timestamps themselves.
 */
bool EvenInsideD24(const BlockHeader& h, int64_t step) {
  return h.rows > 1 && h.first >= kMinTimestamp && h.first <= kMaxTimestamp && step > 0 &&
         step <= (kMaxTimestamp - h.first) / static_cast<int64_t>(h.rows - 1);
}

/** Decodes the timestamps; returns the step when they are evenly spaced and so known ascending and
 * inside D24 already (then written to out only when `fillEven`), 0 when they need checking. */
int64_t ReadTimestamps(Reader& r, const BlockHeader& h, double* out, bool fillEven) {
  uint32_t rows = h.rows;
  out[0] = static_cast<double>(h.first);
  if (rows == 1) return 0;
  // Unsigned arithmetic: hostile steps wrap instead of overflowing.
  auto step = static_cast<uint64_t>(r.SVarint());
  uint64_t exceptions = r.Varint();
  if (exceptions >= rows) throw CorruptBlock("timestamp exceptions");
  auto t = static_cast<uint64_t>(h.first);
  if (exceptions == 0) {
    const auto s = static_cast<int64_t>(step);
    // The common block, evenly spaced and ascending inside D24: whole seconds
    // below 2^53 are exact in doubles, so the loop needs no int64 conversion
    // and vectorises. Other steps (hostile ones wrap) take the integer loop,
    // and DecodeBlock's checks refuse them.
    if (EvenInsideD24(h, s)) {
      const auto first = static_cast<double>(h.first), ds = static_cast<double>(s);
      if (fillEven)
        for (uint32_t i = 1; i < rows; i++) out[i] = first + ds * static_cast<double>(i);
      return s;
    }
    for (uint32_t i = 1; i < rows; i++)
      out[i] = static_cast<double>(static_cast<int64_t>(t + step * i));
    return 0;
  }
  uint64_t at = 0;
  uint64_t next = r.Varint();
  for (uint32_t i = 1; i < rows; i++) {
    uint64_t delta = step;
    if (i == at + next && exceptions > 0) {
      delta += static_cast<uint64_t>(r.SVarint());
      at = i;
      if (--exceptions > 0) next = r.Varint();
    }
    t += delta;
    out[i] = static_cast<double>(static_cast<int64_t>(t));
  }
  if (exceptions != 0) throw CorruptBlock("timestamp exception index");
  return 0;
}

void ReadMissing(Reader& r, uint32_t rows, ColumnOut& col, MissingForm* form) {
  *form = static_cast<MissingForm>(r.U8());
  switch (*form) {
    case MissingForm::kNone:
      col.anyMissing = false;
      return;
    case MissingForm::kAll:
      std::memset(col.missing, 1, rows);
      col.anyMissing = true;
      return;
    case MissingForm::kBitmap: {
      const uint8_t* bits = r.Take((rows + 7) / 8);
      for (uint32_t i = 0; i < rows; i++) col.missing[i] = (bits[i >> 3] >> (i & 7)) & 1;
      col.anyMissing = true;
      return;
    }
  }
  throw CorruptBlock("missing-value form");
}

/**
 * Mantissas to values by FromDecimal. x86 before AVX-512 has no vector
 * int64-to-double conversion, so the compiler leaves the plain loop scalar;
 * within +-2^51 (every W1 mantissa, and most data) the int64 bits plus those
 * of 1.5 * 2^52 are the double 1.5 * 2^52 + n, exactly, and subtracting gives
 * n: the same double, with vector adds. One vectorised pass checks the range.
 */
template <typename T>
void ToValues(const int64_t* n, uint32_t rows, uint8_t e, T* out) {
  uint64_t outside = 0;
  for (uint32_t i = 0; i < rows; i++)
    outside |= (static_cast<uint64_t>(n[i]) + (uint64_t{1} << 51)) >> 52;
  if (outside != 0) {
    for (uint32_t i = 0; i < rows; i++) out[i] = FloatTraits<T>::FromDecimal(n[i], e);
    return;
  }
  constexpr uint64_t kMagicBits = 0x4338000000000000;  // 1.5 * 2^52
  constexpr double kMagic = 6755399441055744.0;
  for (uint32_t i = 0; i < rows; i++) {
    double d;
    const uint64_t bits = static_cast<uint64_t>(n[i]) + kMagicBits;
    std::memcpy(&d, &bits, 8);
    out[i] = FromDouble<T>(d - kMagic, e);
  }
}

template <typename T>
void ReadFloats(Reader& r, uint32_t rows, T* out) {
  auto scheme = static_cast<FloatScheme>(r.U8());
  if (scheme == FloatScheme::kRaw) {
    std::memcpy(out, r.Take(sizeof(T) * rows), sizeof(T) * rows);
    return;
  }
  if (scheme != FloatScheme::kDecimal) throw CorruptBlock("float scheme");
  uint8_t e = r.U8();
  if (e > FloatTraits<T>::kMaxExponent) throw CorruptBlock("decimal exponent");
  // Mantissas become values in the pass that decodes them: on W1 blocks a
  // whole block 0.95 -> 0.74 ns a row as Single, 1.58 -> 1.37 as Double,
  // against writing them out and converting them in a second, vectorised pass.
  const IntSection s = LocateInts(r, rows);
  DecodeDecimalsRange(s, 0, rows, s.first, e, out);
  uint64_t exceptions = r.Varint();
  if (exceptions > rows) throw CorruptBlock("float exceptions");
  auto at = static_cast<uint64_t>(-1);
  for (uint64_t k = 0; k < exceptions; k++) {
    at += r.Varint();
    if (at >= rows) throw CorruptBlock("float exception index");
    std::memcpy(&out[at], r.Take(sizeof(T)), sizeof(T));
  }
}

void ReadFlags(Reader& r, uint32_t rows, int32_t* out) {
  DecodeInts(r, rows, out);  // an id outside int32 throws
}

}  // namespace

std::vector<uint8_t> EncodeBlock(const double* timestamps, uint32_t rows, const ColumnIn* columns,
                                 uint8_t count) {
  if (rows == 0 || rows > kMaxBlockRows)
    throw std::invalid_argument("a block holds 1 to 16536 rows");
  std::vector<int64_t> t(rows);
  for (uint32_t i = 0; i < rows; i++) {
    // The JS wrapper validates; this re-check keeps the cast defined (no NaN, no overflow) for any
    // caller.
    if (!(timestamps[i] >= kMinTimestamp && timestamps[i] <= kMaxTimestamp))
      throw std::invalid_argument("timestamps lie in 0001..9999 (D24)");
    t[i] = static_cast<int64_t>(timestamps[i]);
  }
  Writer w;
  w.U8(kBlockVersion);
  w.U8(count);
  w.U32(rows);
  w.I64(t[0]);
  for (uint8_t c = 0; c < count; c++) w.U8(static_cast<uint8_t>(columns[c].kind));
  WriteTimestamps(w, t.data(), rows);
  for (uint8_t c = 0; c < count; c++) {
    const ColumnIn& col = columns[c];
    if (WriteMissing(w, col.missing, rows) == MissingForm::kAll) continue;
    switch (col.kind) {
      case FieldKind::kSingle:
        WriteFloats(w, static_cast<const float*>(col.values), col.missing, rows);
        break;
      case FieldKind::kDouble:
        WriteFloats(w, static_cast<const double*>(col.values), col.missing, rows);
        break;
      case FieldKind::kFlag:
        WriteFlags(w, static_cast<const int32_t*>(col.values), col.missing, rows);
        break;
    }
  }
  w.U32(Crc32c(w.data(), w.size()));
  return std::move(w.bytes());
}

BlockHeader ReadBlockHeader(const uint8_t* data, size_t size) {
  if (size < 4) throw CorruptBlock("truncated");
  uint32_t stored;
  std::memcpy(&stored, data + size - 4, 4);
  if (Crc32c(data, size - 4) != stored) throw CorruptBlock("checksum mismatch");
  return ReadBlockHeaderUnchecked(data, size);
}

BlockHeader ReadBlockHeaderUnchecked(const uint8_t* data, size_t size) {
  if (size < 4) throw CorruptBlock("truncated");
  Reader r(data, size - 4);
  BlockHeader h{};
  uint8_t version = r.U8();
  if (version != kBlockVersion) throw CorruptBlock("unknown version " + std::to_string(version));
  h.columns = r.U8();
  h.rows = r.U32();
  if (h.rows == 0 || h.rows > kMaxBlockRows)
    throw CorruptBlock("row count " + std::to_string(h.rows));
  h.first = r.I64();
  for (uint8_t c = 0; c < h.columns; c++) {
    uint8_t kind = r.U8();
    if (kind > static_cast<uint8_t>(FieldKind::kFlag)) throw CorruptBlock("column kind");
    h.kinds[c] = static_cast<FieldKind>(kind);
  }
  h.headerBytes = r.Consumed();
  return h;
}

int64_t DecodeBlock(const uint8_t* data, size_t size, const BlockHeader& h, double* timestamps,
                    ColumnOut* columns, bool fillEven) {
  Reader r(data, size - 4);
  r.Take(h.headerBytes);  // already read by ReadBlockHeader
  const int64_t even = ReadTimestamps(r, h, timestamps, fillEven);
  if (even == 0) {
    RequireAscending(timestamps, h.rows);
    RequireD24(timestamps, h.rows);
  }
  for (uint8_t c = 0; c < h.columns; c++) {
    ColumnOut& col = columns[c];
    MissingForm form;
    ReadMissing(r, h.rows, col, &form);
    if (form == MissingForm::kAll) continue;
    switch (h.kinds[c]) {
      case FieldKind::kSingle:
        ReadFloats(r, h.rows, static_cast<float*>(col.values));
        break;
      case FieldKind::kDouble:
        ReadFloats(r, h.rows, static_cast<double*>(col.values));
        break;
      case FieldKind::kFlag:
        ReadFlags(r, h.rows, static_cast<int32_t*>(col.values));
        break;
    }
  }
  if (!r.AtEnd()) throw CorruptBlock("trailing bytes");
  return even;
}

}  // namespace meridian

namespace meridian {

void ScanBlock::Decode(const uint8_t* data, size_t size) {
  Locate(data, size);
  windowHi_ = 0;
  DecodeRows(0, h_.rows, nullptr);
  // A hostile block's exceptions out of order: applied in their order, the last write winning (as
  // DecodeBlock does), over values computed whole.
  for (uint8_t c = 0; c < h_.columns; c++) {
    if (!cols_[c].unordered) continue;
    Values(c);
    cols_[c].decimal = false;
  }
}

void ScanBlock::Locate(const uint8_t* data, size_t size, bool checked) {
  h_ = checked ? ReadBlockHeaderUnchecked(data, size) : ReadBlockHeader(data, size);
  const uint32_t rows = h_.rows;
  Reader r(data, size - 4);
  r.Take(h_.headerBytes);
  partial_ = true;
  windowLo_ = windowHi_ = 0;
  // Evenly spaced timestamps inside D24 (ReadTimestamps' fast case) are kept as first and step.
  even_ = false;
  if (rows > 1) {
    Reader peek = r;
    const int64_t s = peek.SVarint();
    if (peek.Varint() == 0 && EvenInsideD24(h_, s)) {
      even_ = true;
      first_ = h_.first;
      step_ = s;
      r = peek;
    }
  }
  if (!even_) {
    ts_.resize(rows);
    if (ReadTimestamps(r, h_, ts_.data(), true) == 0) {
      RequireAscending(ts_.data(), rows);
      RequireD24(ts_.data(), rows);
    }
  }
  cols_.resize(h_.columns);
  for (uint8_t c = 0; c < h_.columns; c++) {
    Column& col = cols_[c];
    col.missing.resize(rows);
    col.decimal = col.runs = col.sequence = col.unordered = false;
    col.valuesReady = false;
    col.bitmap = col.raw = nullptr;
    const auto form = static_cast<MissingForm>(r.U8());
    col.anyMissing = form != MissingForm::kNone;
    if (form == MissingForm::kBitmap) {
      col.bitmap = r.Take((rows + 7) / 8);
    } else if (form == MissingForm::kAll) {
      std::memset(col.missing.data(), 1, rows);
      col.values.assign(rows, 0);  // no value stored: zeros, never read (every row is missing)
      col.flags.assign(rows, 0);
      col.valuesReady = true;
      continue;
    } else if (form != MissingForm::kNone) {
      throw CorruptBlock("missing-value form");
    }
    switch (h_.kinds[c]) {
      case FieldKind::kSingle:
        ReadFloatColumn<float>(r, col);
        break;
      case FieldKind::kDouble:
        ReadFloatColumn<double>(r, col);
        break;
      case FieldKind::kFlag:
        ReadFlagColumn(r, col);
        break;
    }
    partial_ &= !col.unordered;
  }
  if (!r.AtEnd()) throw CorruptBlock("trailing bytes");
}

void ScanBlock::DecodeRows(uint32_t lo, uint32_t hi, const int64_t* at) {
  hi = std::min(hi, h_.rows);
  if (lo >= hi) return;
  if (lo != windowHi_) windowLo_ = lo;
  windowHi_ = hi;
  for (uint8_t c = 0; c < h_.columns; c++) {
    Column& col = cols_[c];
    if (col.bitmap != nullptr)
      for (uint32_t i = lo; i < hi; i++) col.missing[i] = (col.bitmap[i >> 3] >> (i & 7)) & 1;
    if (col.raw != nullptr) {
      const size_t width = h_.kinds[c] == FieldKind::kSingle ? 4 : 8;
      std::memcpy(reinterpret_cast<uint8_t*>(col.values.data()) + lo * width, col.raw + lo * width,
                  (hi - lo) * width);
    }
    if (!col.sequence) continue;
    const uint64_t start = at != nullptr ? static_cast<uint64_t>(at[c]) : 0;
    if (h_.kinds[c] == FieldKind::kFlag) {
      DecodeIntsRange(col.seq, lo, hi, start, col.flags.data());
    } else {
      DecodeIntsRange(col.seq, lo, hi, start, col.mantissas.data());
      col.valuesReady = false;
    }
  }
}

int64_t ScanBlock::SequenceAt(uint8_t c, uint32_t i) const {
  const Column& col = cols_[c];
  if (!col.sequence) return 0;
  return h_.kinds[c] == FieldKind::kFlag ? col.flags[i] : col.mantissas[i];
}

template <typename T>
void ScanBlock::ReadFloatColumn(Reader& r, Column& col) {
  const uint32_t rows = h_.rows;
  col.values.resize(rows);
  auto scheme = static_cast<FloatScheme>(r.U8());
  if (scheme == FloatScheme::kRaw) {
    col.raw = r.Take(sizeof(T) * rows);
    col.valuesReady = true;
    return;
  }
  if (scheme != FloatScheme::kDecimal) throw CorruptBlock("float scheme");
  const uint8_t e = r.U8();
  if (e > FloatTraits<T>::kMaxExponent) throw CorruptBlock("decimal exponent");
  col.exponent = e;
  col.mantissas.resize(rows);
  col.seq = LocateInts(r, rows);
  col.sequence = true;
  const uint64_t exceptions = r.Varint();
  if (exceptions > rows) throw CorruptBlock("float exceptions");
  col.exceptionRows.clear();
  col.exceptionBits.clear();
  bool ascending = true;  // always, from our encoder; a hostile block may repeat or wrap
  auto at = static_cast<uint64_t>(-1);
  for (uint64_t k = 0; k < exceptions; k++) {
    const uint64_t next = at + r.Varint();
    if (next >= rows) throw CorruptBlock("float exception index");
    ascending &= k == 0 || next > at;
    at = next;
    uint64_t bits = 0;
    std::memcpy(&bits, r.Take(sizeof(T)), sizeof(T));
    col.exceptionRows.push_back(static_cast<uint32_t>(at));
    col.exceptionBits.push_back(bits);
  }
  col.decimal = true;
  col.unordered = !ascending;
}

void ScanBlock::ReadFlagColumn(Reader& r, Column& col) {
  const uint32_t rows = h_.rows;
  Reader peek = r;
  if (static_cast<IntForm>(peek.U8()) != IntForm::kRuns) {
    col.flags.resize(rows);
    col.seq = LocateInts(r, rows);
    col.sequence = true;
    return;
  }
  // Runs stay runs, read and checked as DecodeInts reads them.
  col.runStarts.clear();
  col.runIds.clear();
  ReadRuns(peek, rows, [&](size_t at, size_t, int64_t id) {
    if (id < INT32_MIN || id > INT32_MAX) throw CorruptBlock("integer out of range");
    col.runStarts.push_back(static_cast<uint32_t>(at));
    col.runIds.push_back(static_cast<int32_t>(id));
  });
  col.runs = true;
  r = peek;
}

uint32_t ScanBlock::LowerBound(int64_t t, uint32_t lo, uint32_t hi) const {
  if (lo >= hi) return hi;
  if (!even_)
    return static_cast<uint32_t>(
        std::lower_bound(ts_.data() + lo, ts_.data() + hi, static_cast<double>(t)) - ts_.data());
  if (t <= first_) return lo;
  // Row i is at first + step * i: the first at or after t is ceil((t - first) / step).
  const uint64_t i = (static_cast<uint64_t>(t - first_) + static_cast<uint64_t>(step_) - 1) /
                     static_cast<uint64_t>(step_);
  return static_cast<uint32_t>(std::clamp<uint64_t>(i, lo, hi));
}

const int64_t* ScanBlock::Mantissas(uint8_t c) const {
  const Column& col = cols_[c];
  return col.decimal && !col.anyMissing ? col.mantissas.data() : nullptr;
}

bool ScanBlock::Exceptional(uint8_t c, uint32_t i, uint32_t j) const {
  const std::vector<uint32_t>& rows = cols_[c].exceptionRows;
  auto it = std::lower_bound(rows.begin(), rows.end(), i);
  return it != rows.end() && *it < j;
}

const void* ScanBlock::Values(uint8_t c) {
  Column& col = cols_[c];
  if (!col.valuesReady) {
    // The rows decoded (all, after Decode); the exceptions are all applied, those outside read no
    // further.
    const uint32_t lo = windowLo_, rows = windowHi_ - windowLo_;
    if (h_.kinds[c] == FieldKind::kSingle) {
      auto* out = reinterpret_cast<float*>(col.values.data());
      ToValues(col.mantissas.data() + lo, rows, col.exponent, out + lo);
      for (size_t k = 0; k < col.exceptionRows.size(); k++)
        std::memcpy(&out[col.exceptionRows[k]], &col.exceptionBits[k], 4);
    } else {
      auto* out = reinterpret_cast<double*>(col.values.data());
      ToValues(col.mantissas.data() + lo, rows, col.exponent, out + lo);
      for (size_t k = 0; k < col.exceptionRows.size(); k++)
        std::memcpy(&out[col.exceptionRows[k]], &col.exceptionBits[k], 8);
    }
    col.valuesReady = true;
  }
  return col.values.data();
}

uint64_t ScanBlock::Cell(uint8_t c, uint32_t i) const {
  if (Missing(c, i)) return 0;
  const Column& col = cols_[c];
  uint64_t bits = 0;
  switch (h_.kinds[c]) {
    case FieldKind::kFlag: {
      const int32_t id =
          col.runs ? col.runIds[std::upper_bound(col.runStarts.begin(), col.runStarts.end(), i) -
                                col.runStarts.begin() - 1]
                   : col.flags[i];
      std::memcpy(&bits, &id, 4);
      return bits;
    }
    case FieldKind::kSingle:
    case FieldKind::kDouble: {
      const size_t width = h_.kinds[c] == FieldKind::kSingle ? 4 : 8;
      if (!col.decimal || col.valuesReady) {
        std::memcpy(&bits, reinterpret_cast<const uint8_t*>(col.values.data()) + i * width, width);
        return bits;
      }
      auto it = std::lower_bound(col.exceptionRows.begin(), col.exceptionRows.end(), i);
      if (it != col.exceptionRows.end() && *it == i)
        return col.exceptionBits[it - col.exceptionRows.begin()];
      if (width == 4) {
        const float v = FloatTraits<float>::FromDecimal(col.mantissas[i], col.exponent);
        std::memcpy(&bits, &v, 4);
      } else {
        const double v = FloatTraits<double>::FromDecimal(col.mantissas[i], col.exponent);
        std::memcpy(&bits, &v, 8);
      }
      return bits;
    }
  }
  return bits;
}

double ScanBlock::Value(uint8_t c, uint32_t i) const { return CellValue(h_.kinds[c], Cell(c, i)); }

}  // namespace meridian
