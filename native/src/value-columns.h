// The columns of a ValuesChunk (proto/meridian/timeseries/v1), written in
// protobuf wire form straight from an encoded block: field 2, the packed
// timestamps, and one field 3 per data field, a ValueColumn message with its
// packed singles (1), doubles (2) or flags (3) and the missing flag rows (4).
// Each part is a field's length-delimited payload (length varint, then the
// bytes), as protobuf-es keeps an unknown field, so the JS side sends them
// without building a value per row.
//
// Sizes are known before a byte is written, so the caller allocates once and
// the parts are written in place, back to back (no vector per part, no copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "block-view.h"

namespace meridian {

class ColumnsWriter {
 public:
  /** Decodes the block and sizes its rows in [from, to], at most maxRows. Throws CorruptBlock. */
  ColumnsWriter(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows);

  [[nodiscard]] const Taken& taken() const { return range_.taken; }
  /** Parts: the timestamps, then one per data field. */
  [[nodiscard]] uint32_t parts() const { return 1 + block_.header().columns; }
  /** Bytes of all parts together. */
  [[nodiscard]] size_t size() const { return size_; }
  /** Writes the parts into out (size() bytes); ends[i] is where part i ends. */
  void Write(uint8_t* out, size_t* ends) const;

 private:
  BlockView block_;
  BlockView::Range range_;
  size_t timestampBytes_ = 0;
  /**
   * Where the ascending timestamps change varint size (found by binary
   * search, so sizing needs no pass over the rows): rows [begin, runs_[0])
   * are negative and take 10 bytes; rows [runs_[k-1], runs_[k]) take k.
   */
  uint32_t runs_[11];
  /** Per column: the packed values' bytes, and (flags) the missing indexes' bytes. */
  std::vector<size_t> valueBytes_, missingBytes_;
  size_t size_ = 0;
};

}  // namespace meridian
