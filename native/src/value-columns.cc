#include "value-columns.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace meridian {
namespace {

constexpr uint8_t kLengthDelimited = 2;

inline size_t VarintSize(uint64_t v) {
  return static_cast<size_t>(63 - __builtin_clzll(v | 1)) / 7 + 1;
}

inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// int64 and int32 go on the wire as two's complement, sign-extended to 64 bits.
inline uint64_t Wire(int64_t v) { return static_cast<uint64_t>(v); }

/** Bytes of a packed field inside a message: tag, length, body; nothing when empty (proto3). */
inline size_t PackedSize(size_t body) { return body == 0 ? 0 : 1 + VarintSize(body) + body; }

inline uint8_t* PutPackedHead(uint8_t* p, uint32_t field, size_t body) {
  *p++ = static_cast<uint8_t>((field << 3) | kLengthDelimited);
  return PutVarint(p, body);
}

/** A varint known to take k bytes (unrolled for the run of same-size timestamps). */
template <int k>
inline uint8_t* PutVarintOf(uint8_t* p, uint64_t v) {
  for (int i = 0; i < k - 1; i++, v >>= 7) *p++ = static_cast<uint8_t>(v | 0x80);
  *p++ = static_cast<uint8_t>(v);
  return p;
}

template <int k>
uint8_t* PutTimestamps(const double* ts, uint32_t begin, uint32_t stop, uint8_t* p) {
  for (uint32_t i = begin; i < stop; i++) p = PutVarintOf<k>(p, Wire(static_cast<int64_t>(ts[i])));
  return p;
}

/** Fills runs (see ColumnsWriter::runs_) for the ascending timestamps [begin, stop). */
void SizeRuns(const double* ts, uint32_t begin, uint32_t stop, uint32_t* runs) {
  runs[0] = static_cast<uint32_t>(std::lower_bound(ts + begin, ts + stop, 0.0) - ts);
  for (int k = 1; k <= 9; k++)
    runs[k] = static_cast<uint32_t>(
        std::lower_bound(ts + runs[0], ts + stop, std::ldexp(1.0, 7 * k)) - ts);
  runs[10] = stop;
}

/** Whether every flag is present and one byte long (0..127), the common case. */
bool SmallFlags(const BlockView& b, uint8_t c, uint32_t begin, uint32_t stop) {
  if (b.column(c).anyMissing) return false;
  const auto* values = static_cast<const uint32_t*>(b.column(c).values);
  uint32_t any = 0;
  for (uint32_t i = begin; i < stop; i++) any |= values[i];  // vectorised
  return any < 0x80;
}

template <typename T>
uint8_t* PutFixed(const BlockView& b, uint8_t c, uint32_t begin, uint32_t stop, uint8_t* p) {
  const T* values = static_cast<const T*>(b.column(c).values);
  std::memcpy(p, values + begin, (stop - begin) * sizeof(T));  // little endian, as the wire form
  if (b.column(c).anyMissing) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (uint32_t i = begin; i < stop; i++)
      if (b.Missing(c, i)) std::memcpy(p + (i - begin) * sizeof(T), &nan, sizeof(T));
  }
  return p + (stop - begin) * sizeof(T);
}

}  // namespace

ColumnsWriter::ColumnsWriter(const uint8_t* data, size_t size, int64_t from, int64_t to,
                             uint32_t maxRows)
    : block_(data, size), range_(block_.Select(from, to, maxRows)) {
  const BlockHeader& h = block_.header();
  const uint32_t begin = range_.begin, stop = range_.stop, rows = stop - begin;
  const double* ts = block_.timestamps();
  SizeRuns(ts, begin, stop, runs_);
  timestampBytes_ = size_t{runs_[0] - begin} * 10;
  for (int k = 1; k <= 10; k++) timestampBytes_ += size_t{runs_[k] - runs_[k - 1]} * k;
  size_ = VarintSize(timestampBytes_) + timestampBytes_;
  valueBytes_.assign(h.columns, 0);
  missingBytes_.assign(h.columns, 0);
  for (uint8_t c = 0; c < h.columns; c++) {
    switch (h.kinds[c]) {
      case FieldKind::kSingle:
        valueBytes_[c] = size_t{rows} * 4;
        break;
      case FieldKind::kDouble:
        valueBytes_[c] = size_t{rows} * 8;
        break;
      case FieldKind::kFlag: {
        const auto* values = static_cast<const int32_t*>(block_.column(c).values);
        if (SmallFlags(block_, c, begin, stop)) {
          valueBytes_[c] = rows;
          break;
        }
        for (uint32_t i = begin; i < stop; i++) {
          if (block_.Missing(c, i)) {
            valueBytes_[c] += 1;  // a 0 in its place
            missingBytes_[c] += VarintSize(i - begin);
          } else {
            valueBytes_[c] += VarintSize(Wire(values[i]));
          }
        }
        break;
      }
    }
    const size_t message = PackedSize(valueBytes_[c]) + PackedSize(missingBytes_[c]);
    size_ += VarintSize(message) + message;
  }
}

void ColumnsWriter::Write(uint8_t* out, size_t* ends) const {
  const BlockHeader& h = block_.header();
  const uint32_t begin = range_.begin, stop = range_.stop;
  const double* ts = block_.timestamps();
  uint8_t* p = PutVarint(out, timestampBytes_);
  using Put = uint8_t* (*)(const double*, uint32_t, uint32_t, uint8_t*);
  static constexpr Put kPut[] = {nullptr,          PutTimestamps<1>, PutTimestamps<2>,
                                 PutTimestamps<3>, PutTimestamps<4>, PutTimestamps<5>,
                                 PutTimestamps<6>, PutTimestamps<7>, PutTimestamps<8>,
                                 PutTimestamps<9>, PutTimestamps<10>};
  p = kPut[10](ts, begin, runs_[0], p);  // negatives
  for (int k = 1; k <= 10; k++) p = kPut[k](ts, runs_[k - 1], runs_[k], p);
  ends[0] = p - out;

  for (uint8_t c = 0; c < h.columns; c++) {
    p = PutVarint(p, PackedSize(valueBytes_[c]) + PackedSize(missingBytes_[c]));
    if (valueBytes_[c] > 0) {
      switch (h.kinds[c]) {
        case FieldKind::kSingle:
          p = PutFixed<float>(block_, c, begin, stop, PutPackedHead(p, 1, valueBytes_[c]));
          break;
        case FieldKind::kDouble:
          p = PutFixed<double>(block_, c, begin, stop, PutPackedHead(p, 2, valueBytes_[c]));
          break;
        case FieldKind::kFlag: {
          const auto* values = static_cast<const int32_t*>(block_.column(c).values);
          p = PutPackedHead(p, 3, valueBytes_[c]);
          if (valueBytes_[c] == stop - begin &&
              missingBytes_[c] == 0) {  // one byte each (SmallFlags)
            for (uint32_t i = begin; i < stop; i++) *p++ = static_cast<uint8_t>(values[i]);
            break;
          }
          for (uint32_t i = begin; i < stop; i++)
            p = PutVarint(p, block_.Missing(c, i) ? 0 : Wire(values[i]));
          if (missingBytes_[c] > 0) {
            p = PutPackedHead(p, 4, missingBytes_[c]);
            for (uint32_t i = begin; i < stop; i++)
              if (block_.Missing(c, i)) p = PutVarint(p, i - begin);
          }
          break;
        }
      }
    }
    ends[1 + c] = p - out;
  }
}

}  // namespace meridian
