#include "int-sequence.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace meridian {
namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

struct Range {
  int64_t min, max;
};

Range RangeOf(const int64_t* v, size_t n) {
  Range r{v[0], v[0]};
  for (size_t i = 1; i < n; i++) {
    r.min = std::min(r.min, v[i]);
    r.max = std::max(r.max, v[i]);
  }
  return r;
}

uint8_t WidthOf(Range r) {
  uint8_t width = BitWidth(static_cast<uint64_t>(r.max) - static_cast<uint64_t>(r.min));
  if (width > kMaxPackWidth) throw std::logic_error("integer range too wide to pack");
  return width;
}

void PackFrame(Writer& w, const int64_t* v, size_t n, int64_t min, uint8_t width) {
  std::vector<uint64_t> offsets(n);
  for (size_t i = 0; i < n; i++)
    offsets[i] = static_cast<uint64_t>(v[i]) - static_cast<uint64_t>(min);
  w.U8(width);
  w.Pack(offsets.data(), n, width);
}

}  // namespace

void EncodeInts(Writer& w, const int64_t* v, size_t n) {
  if (n == 0) throw std::logic_error("empty sequence");
  Range frame = RangeOf(v, n);
  uint8_t frameWidth = WidthOf(frame);
  size_t frameSize = VarintSize(ZigZag(frame.min)) + 1 + PackedBytes(n, frameWidth);

  std::vector<int64_t> deltas(n > 1 ? n - 1 : 1, 0);
  for (size_t i = 1; i < n; i++) deltas[i - 1] = v[i] - v[i - 1];
  Range delta = RangeOf(deltas.data(), deltas.size());
  uint8_t deltaWidth = WidthOf(delta);
  size_t deltaSize =
      VarintSize(ZigZag(v[0])) + VarintSize(ZigZag(delta.min)) + 1 + PackedBytes(n - 1, deltaWidth);

  std::vector<size_t> runStarts;  // one scan finds the runs and what they would cost
  size_t runsSize = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) j++;
    runStarts.push_back(i);
    runsSize += VarintSize(ZigZag(v[i])) + VarintSize(j - i);
    i = j;
  }
  runsSize += VarintSize(runStarts.size());

  if (runsSize <= frameSize && runsSize <= deltaSize) {
    w.U8(static_cast<uint8_t>(IntForm::kRuns));
    w.Varint(runStarts.size());
    for (size_t k = 0; k < runStarts.size(); k++) {
      size_t end = k + 1 < runStarts.size() ? runStarts[k + 1] : n;
      w.SVarint(v[runStarts[k]]);
      w.Varint(end - runStarts[k]);
    }
  } else if (deltaSize < frameSize) {
    w.U8(static_cast<uint8_t>(IntForm::kDelta));
    w.SVarint(v[0]);
    w.SVarint(delta.min);
    PackFrame(w, deltas.data(), n - 1, delta.min, deltaWidth);
  } else {
    w.U8(static_cast<uint8_t>(IntForm::kFrame));
    w.SVarint(frame.min);
    PackFrame(w, v, n, frame.min, frameWidth);
  }
}

namespace {

/** Whether v lies outside T (never, for int64): branch-free, so the loops vectorise. */
template <typename T>
inline uint64_t Outside(uint64_t v) {
  if constexpr (sizeof(T) == 8) {
    return 0;
  } else {
    return (v - static_cast<uint64_t>(INT32_MIN)) >> 32;
  }
}

}  // namespace

template <typename T>
void DecodeInts(Reader& r, size_t n, T* out) {
  auto form = static_cast<IntForm>(r.U8());
  uint64_t outside = 0;
  switch (form) {
    case IntForm::kFrame:
    case IntForm::kDelta: {
      // Unsigned arithmetic: a hostile base wraps instead of overflowing.
      uint64_t first = form == IntForm::kDelta ? static_cast<uint64_t>(r.SVarint()) : 0;
      auto base = static_cast<uint64_t>(r.SVarint());
      uint8_t width = r.U8();
      if (width > kMaxPackWidth) throw CorruptBlock("pack width " + std::to_string(width));
      size_t count = form == IntForm::kDelta ? n - 1 : n;
      const uint8_t* packed = r.Take(PackedBytes(count, width));
      uint64_t mask = MaskOf(width);
      if (form == IntForm::kFrame) {
        for (size_t i = 0; i < n; i++) {
          const uint64_t v = base + Unpack(packed, i, width, mask);
          outside |= Outside<T>(v);
          out[i] = static_cast<T>(v);
        }
      } else {
        uint64_t acc = first;
        outside |= Outside<T>(acc);
        out[0] = static_cast<T>(acc);
        for (size_t i = 1; i < n; i++) {
          acc += base + Unpack(packed, i - 1, width, mask);
          outside |= Outside<T>(acc);
          out[i] = static_cast<T>(acc);
        }
      }
      break;
    }
    case IntForm::kRuns:
      ReadRuns(r, n, [&](size_t at, size_t len, int64_t value) {
        outside |= Outside<T>(static_cast<uint64_t>(value));
        std::fill(out + at, out + at + len, static_cast<T>(value));
      });
      break;
    default:
      throw CorruptBlock("unknown integer form");
  }
  if (outside != 0) throw CorruptBlock("integer out of range");
}

template void DecodeInts<int64_t>(Reader& r, size_t n, int64_t* out);
template void DecodeInts<int32_t>(Reader& r, size_t n, int32_t* out);

}  // namespace meridian
