#include "parquet-pages.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace meridian {
namespace {

void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void PutLE(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

/** `count` values of `width` bits each (0..64), least significant bit first, as Parquet packs them.
 */
template <typename T>
void PutBits(std::vector<uint8_t>& out, const T* values, size_t count, uint8_t width) {
  if (width == 0) return;
  size_t start = out.size();
  out.resize(start + (count * width + 7) / 8);
  uint8_t* p = out.data() + start;
  size_t i = 0;
  if (width <= 32) {
    // Four bytes at a time while whole ones are there: what is held stays under 32 bits, so a value
    // of up to 32 more fits the 64.
    uint64_t acc = 0;
    unsigned bits = 0;
    for (; i < count; i++) {
      acc |= static_cast<uint64_t>(values[i]) << bits;
      bits += width;
      if (bits >= 32) {
        const auto word = static_cast<uint32_t>(acc);
        std::memcpy(p, &word, 4);  // little endian, as the format's bytes are
        p += 4;
        acc >>= 32;
        bits -= 32;
      }
    }
    for (; bits > 0; bits = bits > 8 ? bits - 8 : 0) {
      *p++ = static_cast<uint8_t>(acc);
      acc >>= 8;
    }
    return;
  }
  unsigned __int128 acc = 0;
  unsigned bits = 0;
  for (; i < count; i++) {
    acc |= static_cast<unsigned __int128>(static_cast<uint64_t>(values[i])) << bits;
    bits += width;
    while (bits >= 8) {
      *p++ = static_cast<uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) *p++ = static_cast<uint8_t>(acc);
}

/** Whether the 8 values from v are all equal (without a branch per value). */
inline bool Eight(const uint32_t* v) {
  uint32_t differ = 0;
  for (int k = 1; k < 8; k++) differ |= v[k] ^ v[0];
  return differ == 0;
}

/**
 * The RLE / bit-packing hybrid: literals bit-packed in groups of 8 from the
 * last run's end (only the last group padded with zeros, as the format
 * allows); a group whose 8 values are equal starts an RLE run, to the end of
 * their run. Scanning a group at a time keeps a branch per value (and its
 * misprediction: measured values seldom repeat) out of the loop.
 */
void PutHybrid(std::vector<uint8_t>& out, const uint32_t* v, size_t n, uint8_t width) {
  const size_t valueBytes = (width + 7) / 8;
  size_t lit = 0;
  auto flush = [&](size_t end) {  // literals [lit, end), end - lit a multiple of 8 unless at n
    if (end == lit) return;
    size_t groups = (end - lit + 7) / 8;
    PutVarint(out, (groups << 1) | 1);
    PutBits(out, v + lit, end - lit, width);
    size_t padded = groups * 8 * width / 8, written = ((end - lit) * width + 7) / 8;
    out.insert(out.end(), padded - written, 0);
  };
  for (size_t g = 0; g + 8 <= n;) {
    if (!Eight(v + g)) {
      g += 8;
      continue;
    }
    size_t end = g + 8;
    while (end < n && v[end] == v[g]) end++;
    flush(g);
    PutVarint(out, static_cast<uint64_t>(end - g) << 1);
    const uint32_t value = v[g];
    for (size_t b = 0; b < valueBytes; b++) out.push_back(static_cast<uint8_t>(value >> (8 * b)));
    lit = g = end;
  }
  flush(n);
}

/** One RLE run of `count` times `value` (a level or an index of `width` bits). */
void PutRun(std::vector<uint8_t>& out, uint32_t value, size_t count, uint8_t width) {
  PutVarint(out, static_cast<uint64_t>(count) << 1);
  for (size_t b = 0; b < (width + 7u) / 8u; b++)
    out.push_back(static_cast<uint8_t>(value >> (8 * b)));
}

/** DELTA_BINARY_PACKED: blocks of 128 deltas in 4 miniblocks of 32. */
void PutDeltas(std::vector<uint8_t>& out, const int64_t* v, size_t n) {
  PutVarint(out, 128);
  PutVarint(out, 4);
  PutVarint(out, n);
  PutVarint(out, ZigZag(n > 0 ? v[0] : 0));
  uint64_t d[128];
  for (size_t s = 1; s < n; s += 128) {
    const size_t count = std::min<size_t>(128, n - s);
    int64_t min = INT64_MAX;
    for (size_t k = 0; k < count; k++) {
      auto delta = static_cast<int64_t>(static_cast<uint64_t>(v[s + k]) -
                                        static_cast<uint64_t>(v[s + k - 1]));
      d[k] = static_cast<uint64_t>(delta);
      min = std::min(min, delta);
    }
    PutVarint(out, ZigZag(min));
    uint8_t widths[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < count; k++) d[k] -= static_cast<uint64_t>(min);
    for (size_t k = count; k < 128; k++) d[k] = 0;
    for (size_t m = 0; m < 4; m++) {
      uint64_t any = 0;
      for (size_t k = m * 32; k < m * 32 + 32 && k < count; k++) any |= d[k];
      widths[m] = BitWidth(any);
    }
    PutLE(out, widths, 4);
    for (size_t m = 0; m < 4 && m * 32 < count; m++) PutBits(out, d + m * 32, 32, widths[m]);
  }
}

inline uint64_t Bits(FieldKind kind, const void* values, uint32_t i) {
  switch (kind) {
    case FieldKind::kSingle: {
      uint32_t b;
      std::memcpy(&b, static_cast<const float*>(values) + i, 4);
      return b;
    }
    case FieldKind::kDouble: {
      uint64_t b;
      std::memcpy(&b, static_cast<const double*>(values) + i, 8);
      return b;
    }
    case FieldKind::kFlag:
      return static_cast<uint32_t>(static_cast<const int32_t*>(values)[i]);
  }
  return 0;
}

void PutI32Field(std::vector<uint8_t>& out, uint8_t delta, int64_t v) {
  out.push_back(static_cast<uint8_t>(delta << 4 | 5));  // compact protocol: i32
  PutVarint(out, ZigZag(v));
}

/**
 * A PageHeader (parquet.thrift) in Thrift's compact protocol: type, sizes,
 * then a DataPageHeader (values, encoding, RLE levels) or a
 * DictionaryPageHeader (values, PLAIN).
 */
void PutPageHeader(std::vector<uint8_t>& out, bool dictionary, size_t body, size_t compressed,
                   uint32_t values, ParquetEncoding encoding) {
  PutI32Field(out, 1, dictionary ? 2 : 0);
  PutI32Field(out, 1, static_cast<int64_t>(body));
  PutI32Field(out, 1, static_cast<int64_t>(compressed));
  out.push_back(dictionary ? (4 << 4 | 12) : (2 << 4 | 12));  // field 7 or 5: a struct
  PutI32Field(out, 1, values);
  PutI32Field(out, 1, static_cast<int>(encoding));
  if (!dictionary) {
    PutI32Field(out, 1, static_cast<int>(ParquetEncoding::kRle));
    PutI32Field(out, 1, static_cast<int>(ParquetEncoding::kRle));
  }
  out.push_back(0);
  out.push_back(0);
}

/** A dictionary key's value (its bits are the value's). */
double KeyValue(FieldKind kind, uint64_t key) {
  switch (kind) {
    case FieldKind::kSingle: {
      float f;
      auto b = static_cast<uint32_t>(key);
      std::memcpy(&f, &b, 4);
      return f;
    }
    case FieldKind::kDouble: {
      double d;
      std::memcpy(&d, &key, 8);
      return d;
    }
    case FieldKind::kFlag:
      return static_cast<int32_t>(static_cast<uint32_t>(key));
  }
  return 0;
}

/** How many of the n values are NaN or infinite (a branch-free count the compiler vectorises). */
template <typename T>
uint32_t NonFinite(const T* v, uint32_t n) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < n; i++) count += !(std::fabs(v[i]) <= std::numeric_limits<T>::max());
  return count;
}

inline bool Finite(FieldKind kind, const void* values, uint32_t i) {
  switch (kind) {
    case FieldKind::kSingle:
      return std::isfinite(static_cast<const float*>(values)[i]);
    case FieldKind::kDouble:
      return std::isfinite(static_cast<const double*>(values)[i]);
    case FieldKind::kFlag:
      return true;
  }
  return true;
}

inline size_t Width(FieldKind kind) { return kind == FieldKind::kDouble ? 8 : 4; }

/**
 * The dictionary index of each present value (rows where present[i], or all when !kMissing), into
 * indexes; false once the dictionary would pass `limit` entries. One loop per value type and case,
 * so that the loop holds no test of them.
 */
template <typename Key, typename T, bool kRuns, bool kMissing>
bool IndexValues(DictionaryIndex<Key>& d, const T* values, const uint8_t* present, uint32_t rows,
                 uint32_t limit, uint32_t* indexes) {
  static_assert(sizeof(Key) == sizeof(T));
  d.Reserve();
  uint32_t n = 0;
  for (uint32_t i = 0; i < rows; i++) {
    if (kMissing && !present[i]) continue;
    Key key;
    std::memcpy(&key, values + i, sizeof key);
    const int64_t ix = d.template Find<kRuns>(key, limit);
    if (ix < 0) return false;
    indexes[n++] = static_cast<uint32_t>(ix);
  }
  return true;
}

template <typename Key, typename T, bool kRuns>
bool IndexValues(DictionaryIndex<Key>& d, const T* values, const uint8_t* present, bool anyMissing,
                 uint32_t rows, uint32_t limit, uint32_t* indexes) {
  return anyMissing ? IndexValues<Key, T, kRuns, true>(d, values, present, rows, limit, indexes)
                    : IndexValues<Key, T, kRuns, false>(d, values, present, rows, limit, indexes);
}

}  // namespace

/** Adds a PLAIN page's values to the column's statistics: NaN is in no order, so it is left out. */
void ParquetPages::Include(Column& col, const void* values, uint32_t begin, uint32_t rows,
                           bool anyMissing) {
  for (uint32_t i = 0; i < rows; i++) {
    if (anyMissing && !present_[i]) continue;
    double x = col.kind == FieldKind::kFlag     ? static_cast<const int32_t*>(values)[begin + i]
               : col.kind == FieldKind::kSingle ? static_cast<const float*>(values)[begin + i]
                                                : static_cast<const double*>(values)[begin + i];
    if (std::isnan(x)) continue;
    if (!col.any || x < col.min) col.min = x;
    if (!col.any || x > col.max) col.max = x;
    col.any = true;
  }
}

void ParquetPages::Emit(std::vector<uint8_t>& out, std::vector<ParquetPage>& pages, uint32_t rows,
                        ParquetEncoding encoding) {
  packed_.clear();
  compress_(body_.data(), body_.size(), packed_);
  const size_t at = out.size();
  PutPageHeader(out, false, body_.size(), packed_.size(), rows, encoding);
  const size_t header = out.size() - at;
  out.insert(out.end(), packed_.begin(), packed_.end());
  pages.push_back({out.size(), header + body_.size(), encoding});
  body_.clear();
}

Taken ParquetPages::Add(const uint8_t* data, size_t size, int64_t from, int64_t to,
                        uint32_t maxRows, std::vector<uint8_t>& out,
                        std::vector<ParquetPage>& pages) {
  const BlockView block(data, size);
  const BlockHeader& h = block.header();
  pages.clear();
  const BlockView::Range range = block.Select(from, to, maxRows);
  const uint32_t begin = range.begin, rows = range.stop - range.begin;
  if (rows == 0) return range.taken;
  if (!open_) {
    columns_.assign(h.columns, Column{});
    for (uint8_t c = 0; c < h.columns; c++) columns_[c].kind = h.kinds[c];
    open_ = true;
  } else {
    bool same = columns_.size() == h.columns;
    for (uint8_t c = 0; same && c < h.columns; c++) same = columns_[c].kind == h.kinds[c];
    if (!same) throw CorruptBlock("its fields differ from the other blocks of its series");
  }

  // Timestamps: milliseconds, ascending within a block.
  scratch_.resize(rows);
  auto* ms = reinterpret_cast<int64_t*>(scratch_.data());
  for (uint32_t i = 0; i < rows; i++)
    ms[i] = static_cast<int64_t>(block.timestamps()[begin + i]) * 1000;
  if (!anyTime_ || ms[0] < tmin_) tmin_ = ms[0];
  if (!anyTime_ || ms[rows - 1] > tmax_) tmax_ = ms[rows - 1];
  anyTime_ = true;
  std::vector<uint8_t>& body = body_;
  body.clear();
  PutDeltas(body, ms, rows);
  Emit(out, pages, rows, ParquetEncoding::kDeltaBinaryPacked);

  indexes_.resize(rows);
  uint32_t* indexes = indexes_.data();
  present_.resize(rows);
  for (size_t k = 0; k < columns_.size(); k++) {
    Column& col = columns_[k];
    const auto c = static_cast<uint8_t>(k);
    const void* values = block.column(c).values;
    // Null: missing, or (as in JSON, D25, and the Arrow answer) not a finite number.
    uint32_t nulls = 0;
    switch (col.kind) {
      case FieldKind::kSingle:
        nulls = NonFinite(static_cast<const float*>(values) + begin, rows);
        break;
      case FieldKind::kDouble:
        nulls = NonFinite(static_cast<const double*>(values) + begin, rows);
        break;
      case FieldKind::kFlag:
        break;
    }
    const bool anyMissing = block.column(c).anyMissing || nulls > 0;
    if (anyMissing) {
      nulls = 0;
      for (uint32_t i = 0; i < rows; i++) {
        present_[i] = !block.Missing(c, begin + i) && Finite(col.kind, values, begin + i);
        nulls += !present_[i];
      }
    }
    // Definition levels, with their 4-byte length (data page v1).
    {
      size_t at = body.size();
      const uint32_t length = 0;
      PutLE(body, &length, 4);
      if (nulls == 0) {
        PutRun(body, 1, rows, 1);
      } else {
        for (uint32_t i = 0; i < rows; i++) indexes[i] = present_[i];
        PutHybrid(body, indexes, rows, 1);
      }
      auto levelBytes = static_cast<uint32_t>(body.size() - at - 4);
      std::memcpy(body.data() + at, &levelBytes, 4);
    }
    col.nulls += nulls;
    const uint32_t present = rows - nulls;
    bool dictionary = present > 0 && !col.plain;
    if (dictionary) {
      switch (col.kind) {
        case FieldKind::kSingle:
          dictionary = IndexValues<uint32_t, float, false>(
              col.narrow, static_cast<const float*>(values) + begin, present_.data(), anyMissing,
              rows, kDictionaryLimit, indexes);
          break;
        case FieldKind::kFlag:
          dictionary = IndexValues<uint32_t, int32_t, true>(
              col.narrow, static_cast<const int32_t*>(values) + begin, present_.data(), anyMissing,
              rows, kDictionaryLimit, indexes);
          break;
        case FieldKind::kDouble:
          dictionary = IndexValues<uint64_t, double, false>(
              col.wide, static_cast<const double*>(values) + begin, present_.data(), anyMissing,
              rows, kDictionaryLimit, indexes);
          break;
      }
      if (!dictionary) col.plain = true;
    }
    if (dictionary) {
      const uint8_t width = BitWidth(col.entries() - 1);
      body.push_back(width);
      PutHybrid(body, indexes, present, width);
    } else {
      Include(col, values, begin, rows, anyMissing);
      const size_t w = Width(col.kind);
      const uint8_t* base = static_cast<const uint8_t*>(values) + begin * w;
      if (nulls == 0) {
        PutLE(body, base, size_t{rows} * w);
      } else {
        for (uint32_t i = 0; i < rows; i++)
          if (present_[i]) PutLE(body, base + i * w, w);
      }
    }
    Emit(out, pages, rows, dictionary ? ParquetEncoding::kRleDictionary : ParquetEncoding::kPlain);
  }
  return range.taken;
}

std::vector<ParquetChunkEnd> ParquetPages::FinishRowGroup() {
  std::vector<ParquetChunkEnd> ends(1 + columns_.size());
  if (anyTime_) {
    PutLE(ends[0].min, &tmin_, 8);
    PutLE(ends[0].max, &tmax_, 8);
  }
  anyTime_ = false;
  for (size_t k = 0; k < columns_.size(); k++) {
    Column& col = columns_[k];
    ParquetChunkEnd& e = ends[1 + k];
    e.nulls = col.nulls;
    body_.clear();
    auto include = [&](double x) {
      if (std::isnan(x)) return;
      if (!col.any || x < col.min) col.min = x;
      if (!col.any || x > col.max) col.max = x;
      col.any = true;
    };
    for (uint32_t key : col.narrow.keys()) {
      PutLE(body_, &key, 4);  // little endian
      include(KeyValue(col.kind, key));
    }
    for (uint64_t key : col.wide.keys()) {
      PutLE(body_, &key, 8);
      include(KeyValue(col.kind, key));
    }
    if (!body_.empty()) {
      packed_.clear();
      compress_(body_.data(), body_.size(), packed_);
      PutPageHeader(e.dictionary, true, body_.size(), packed_.size(), col.entries(),
                    ParquetEncoding::kPlain);
      e.dictionaryUncompressed = e.dictionary.size() + body_.size();
      e.dictionary.insert(e.dictionary.end(), packed_.begin(), packed_.end());
      body_.clear();
    }
    if (col.any) {
      switch (col.kind) {
        case FieldKind::kFlag: {
          auto lo = static_cast<int32_t>(col.min), hi = static_cast<int32_t>(col.max);
          PutLE(e.min, &lo, 4);
          PutLE(e.max, &hi, 4);
          break;
        }
        case FieldKind::kSingle: {
          // The format asks for -0 as a zero minimum and +0 as a zero maximum.
          float lo = col.min == 0 ? -0.0f : static_cast<float>(col.min);
          float hi = col.max == 0 ? 0.0f : static_cast<float>(col.max);
          PutLE(e.min, &lo, 4);
          PutLE(e.max, &hi, 4);
          break;
        }
        case FieldKind::kDouble: {
          double lo = col.min == 0 ? -0.0 : col.min, hi = col.max == 0 ? 0.0 : col.max;
          PutLE(e.min, &lo, 8);
          PutLE(e.max, &hi, 8);
          break;
        }
      }
    }
    col.narrow.Clear();
    col.wide.Clear();
    col.plain = false;
    col.any = false;
    col.nulls = 0;
  }
  open_ = false;
  return ends;
}

}  // namespace meridian
