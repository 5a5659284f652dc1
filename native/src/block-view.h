// A block decoded into reusable scratch space (one per thread), and the rows
// of it that a read takes: those in [from, to], at most maxRows. Shared by
// the JSON writer and the columns writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "block-codec.h"

namespace meridian {

/** What a read took from a block: the rows, the last one's timestamp (when rows > 0), and whether
 * rows of its range follow. */
struct Taken {
  uint32_t rows;
  int64_t last;
  bool more;
};

class BlockView {
 public:
  /** Decodes a block; throws CorruptBlock. */
  BlockView(const uint8_t* data, size_t size) : BlockView(data, size, nullptr) {}
  /**
   * Decodes a block whose header is `h` (read by ReadBlockHeader), each column's values into
   * dest[c] (room for h.rows values of its kind) rather than this thread's scratch space, so a
   * writer whose answer holds them as decoded need not copy them; evenly spaced timestamps are
   * kept as the first and the step, and timestamps() is then null (Select and the step serve).
   */
  BlockView(const uint8_t* data, size_t size, const BlockHeader& h, void* const* dest);

  [[nodiscard]] const BlockHeader& header() const { return h_; }
  /** The rows' timestamps; null for a view made with dest whose timestamps are evenly spaced. */
  [[nodiscard]] const double* timestamps() const { return ts_; }
  /** When the timestamps are evenly spaced, the step (row i's is the header's first + i * step);
   * 0 when they are not. */
  [[nodiscard]] int64_t step() const { return step_; }
  [[nodiscard]] const ColumnOut& column(uint8_t c) const { return cols_[c]; }
  [[nodiscard]] bool Missing(uint8_t c, uint32_t row) const {
    return cols_[c].anyMissing && cols_[c].missing[row];
  }

  /** Rows [begin, stop) of [from, to], at most maxRows, and what that takes. */
  struct Range {
    uint32_t begin;
    uint32_t stop;
    Taken taken;
  };
  [[nodiscard]] Range Select(int64_t from, int64_t to, uint32_t maxRows) const;

 private:
  BlockView(const uint8_t* data, size_t size, void* const* dest);
  void Decode(const uint8_t* data, size_t size, void* const* dest);

  BlockHeader h_;
  const double* ts_ = nullptr;
  int64_t step_ = 0;
  std::vector<ColumnOut> cols_;
};

}  // namespace meridian
