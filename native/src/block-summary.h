// A block's summary (D65): the whole rows (timestamp and every cell) holding
// the block's first and last timestamp and, of each Single and Double column,
// its minimum and maximum (missing values and NaN skipped; of equal values
// the earliest row), chosen by the chart's own rule (chart.h Summarize). A
// chart bucket that holds the whole block takes its rows from here instead of
// decoding the block. Stored beside the block, so it is read back as hostile
// bytes: ReadSummary checks all of it and throws CorruptSummary.
//
// Layout (little endian), version 1:
//   u8 version, u8 columns, u8 kind per column, u32 the block's rows, u8 rows held (n)
//   u8 per role (first, last, then per column its min and max): the row holding it, or 0xff
//   per row held (ascending time): i64 timestamp, per column: u8 missing, u64 cell bits
//   u32 CRC-32C of everything before it
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "block-codec.h"

namespace meridian {

constexpr uint8_t kSummaryVersion = 1;
constexpr uint8_t kNoRow = 0xff;

/** A summary that cannot be read: corrupt, truncated, hostile or of an unknown version. */
struct CorruptSummary : std::runtime_error {
  explicit CorruptSummary(const std::string& what)
      : std::runtime_error("corrupt block summary: " + what) {}
};

/** One row copied out of a block: its timestamp and every cell (8 bytes each, any kind: the bits
 * ScanBlock::Cell gives) and whether missing. */
struct ChartRow {
  int64_t t = 0;
  std::vector<uint64_t> cells;
  std::vector<uint8_t> missing;
};

struct BlockSummary {
  uint8_t columns = 0;
  FieldKind kinds[kMaxColumns];
  /** The block's row count. */
  uint32_t blockRows = 0;
  /** The rows held, in ascending time: the first is the block's first row, the last its last. */
  std::vector<ChartRow> rows;
  /** Per role (0 first, 1 last, 2 + 2c the min of column c, 3 + 2c its max): an index into rows,
   * or kNoRow. */
  std::vector<uint8_t> roles;
};

/** Bytes of a summary. */
std::vector<uint8_t> EncodeSummary(const BlockSummary& s);

/** Reads and checks a summary: its checksum, layout and consistency (the roles point at rows that
 * hold them, no row holds a value beyond its column's minimum and maximum or equal to one of them
 * and earlier). Throws CorruptSummary. Reuses `out`'s buffers. */
void ReadSummary(const uint8_t* data, size_t size, BlockSummary* out);

}  // namespace meridian
