// The value rows of the spec as JSON text, written straight from an encoded
// block: ["yyyy-MM-ddTHH:mm:ss",v1,v2,...] per row, comma separated (D25):
// Single and Double as the shortest decimal that reads back the same, Flag
// as its integer id, null for a missing value, NaN or an infinity (which
// JSON cannot hold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "block-view.h"

namespace meridian {

/** Growable text without the zero fill of std::vector::resize: rows are written in place. */
class TextBuffer {
 public:
  void Clear() { size_ = 0; }
  /** Room for n more characters at the end; advance with Commit. */
  char* Reserve(size_t n);
  void Commit(char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  [[nodiscard]] const char* data() const { return data_.get(); }
  [[nodiscard]] size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

/**
 * The rows of a block whose timestamps lie in [from, to], at most maxRows of
 * them, each preceded by a comma unless `first` and it is the first. The
 * block is decoded and the rows chosen first, so a caller can hand in a
 * buffer of bound() bytes (a pooled one, D28) rather than grow one.
 */
class JsonRowsWriter {
 public:
  /** Throws CorruptBlock for a bad block. */
  JsonRowsWriter(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows,
                 bool first);
  [[nodiscard]] const Taken& taken() const { return range_.taken; }
  /** The most bytes Write may take. */
  [[nodiscard]] size_t bound() const;
  /** Writes the rows into out (at least bound() bytes); returns the bytes written. */
  size_t Write(char* out) const;

 private:
  BlockView block_;
  BlockView::Range range_;
  bool first_;
};

/**
 * Appends to `out` the rows of the block whose timestamps lie in [from, to],
 * at most maxRows of them, each preceded by a comma unless `first` and it is
 * the first. Throws CorruptBlock for a bad block.
 */
Taken WriteBlockJson(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows,
                     bool first, TextBuffer& out);

}  // namespace meridian
