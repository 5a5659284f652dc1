// Byte-level building blocks of the block format: a growing writer and a
// bounds-checked reader (every read of a hostile block stays inside it),
// LEB128 varints with zigzag for signed values, and fixed-width bit packing.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace meridian {

/** A block that cannot be decoded: corrupt, truncated, hostile or of an unknown version. */
struct CorruptBlock : std::runtime_error {
  explicit CorruptBlock(const std::string& what) : std::runtime_error("corrupt block: " + what) {}
};

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

/** Bits needed for an unsigned value (0 for 0). */
inline uint8_t BitWidth(uint64_t v) {
  return v == 0 ? 0 : static_cast<uint8_t>(64 - __builtin_clzll(v));
}

// Packed sections end with this many zero bytes, so the decoder may always load 8 bytes at once.
constexpr size_t kPackPadding = 8;
// Widths above this would need a second load per value; the encoder never makes them.
constexpr uint8_t kMaxPackWidth = 56;

inline size_t PackedBytes(size_t count, uint8_t width) {
  return (count * width + 7) / 8 + kPackPadding;
}

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void I64(int64_t v) { Raw(&v, 8); }
  void Raw(const void* p, size_t n) {
    auto b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<uint8_t>(v) | 0x80);
      v >>= 7;
    }
    out_.push_back(static_cast<uint8_t>(v));
  }
  void SVarint(int64_t v) { Varint(ZigZag(v)); }
  /** `count` values of `width` bits each (values already fit), then the padding. */
  void Pack(const uint64_t* values, size_t count, uint8_t width) {
    size_t start = out_.size();
    out_.resize(start + PackedBytes(count, width), 0);
    if (width == 0) return;
    uint8_t* base = out_.data() + start;
    for (size_t i = 0; i < count; i++) {
      size_t bit = i * width;
      uint64_t word;
      std::memcpy(&word, base + (bit >> 3), 8);
      word |= values[i] << (bit & 7);
      std::memcpy(base + (bit >> 3), &word, 8);
    }
  }
  [[nodiscard]] size_t size() const { return out_.size(); }
  uint8_t* data() { return out_.data(); }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : begin_(p), p_(p), end_(p + n) {}
  uint8_t U8() { return *Take(1); }
  uint32_t U32() {
    uint32_t v;
    std::memcpy(&v, Take(4), 4);
    return v;
  }
  int64_t I64() {
    int64_t v;
    std::memcpy(&v, Take(8), 8);
    return v;
  }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = U8();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw CorruptBlock("varint longer than 10 bytes");
  }
  int64_t SVarint() { return UnZigZag(Varint()); }
  /** The next n bytes, checked to be inside the block. */
  const uint8_t* Take(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) throw CorruptBlock("truncated");
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  [[nodiscard]] bool AtEnd() const { return p_ == end_; }
  [[nodiscard]] size_t Consumed() const { return static_cast<size_t>(p_ - begin_); }

 private:
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
};

/** Value i of a packed section; `base` holds at least PackedBytes(count, width) bytes. */
inline uint64_t Unpack(const uint8_t* base, size_t i, uint8_t width, uint64_t mask) {
  size_t bit = i * width;
  uint64_t word;
  std::memcpy(&word, base + (bit >> 3), 8);
  return (word >> (bit & 7)) & mask;
}

inline uint64_t MaskOf(uint8_t width) { return width == 64 ? ~0ULL : (1ULL << width) - 1; }

}  // namespace meridian
