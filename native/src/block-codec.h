// One storage block: up to 16,536 rows of one time series, whole-second
// timestamps and one column per data field, each value possibly missing.
//
// Layout (little endian), version 1:
//   u8 version, u8 columns, u32 rows, i64 first timestamp, u8 kind per column
//   timestamps: svarint step, varint exceptions, (varint index gap, svarint delta - step)...
//   per column: u8 missing form (0 none, 1 bitmap, 2 all) [bitmap], values:
//     Single/Double: u8 scheme; decimal: u8 exponent, integer sequence of
//       mantissas, varint exceptions, (varint index gap, raw value)...; raw: rows values
//     Flag: integer sequence of ids
//   u32 CRC-32C of everything before it
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bytes.h"
#include "int-sequence.h"

namespace meridian {

constexpr uint8_t kBlockVersion = 1;
constexpr uint32_t kMaxBlockRows = 16536;
constexpr uint8_t kMaxColumns = 255;
// D24: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in epoch seconds, as
// MIN_TIMESTAMP and MAX_TIMESTAMP in src/timeseries/blocks/block-codec.ts. Every block
// that decodes lies inside: the JSON writer's dates have four-digit years.
constexpr int64_t kMinTimestamp = -62135596800;
constexpr int64_t kMaxTimestamp = 253402300799;

enum class FieldKind : uint8_t { kSingle = 0, kDouble = 1, kFlag = 2 };

/** A Single or Double cell's bits (a float in the low bytes, or a double) as a double. */
inline double CellValue(FieldKind kind, uint64_t bits) {
  if (kind == FieldKind::kSingle) {
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

struct ColumnIn {
  FieldKind kind;
  /** float, double or int32 values, one per row. */
  const void* values;
  /** One byte per row, non-zero where the value is missing; null when none is. */
  const uint8_t* missing;
};

/** Encodes whole-second timestamps, strictly ascending, inside D24; throws std::invalid_argument
 * for any outside D24. */
std::vector<uint8_t> EncodeBlock(const double* timestamps, uint32_t rows, const ColumnIn* columns,
                                 uint8_t count);

struct BlockHeader {
  uint32_t rows;
  uint8_t columns;
  int64_t first;
  FieldKind kinds[kMaxColumns];
  /** Where the timestamps start. */
  size_t headerBytes;
};

/** Checks version, checksum and header; throws CorruptBlock. */
BlockHeader ReadBlockHeader(const uint8_t* data, size_t size);
/** As ReadBlockHeader, for bytes whose checksum was checked already (held in memory since). */
BlockHeader ReadBlockHeaderUnchecked(const uint8_t* data, size_t size);

struct ColumnOut {
  /** header.rows floats, doubles or int32s, by the column's kind. */
  void* values;
  /** header.rows bytes; filled (1 where a value is missing) only when anyMissing comes back true.
   */
  uint8_t* missing;
  /** Set by the decoder. */
  bool anyMissing;
};

/** Decodes a block whose header ReadBlockHeader returned; throws CorruptBlock, also when its
 * timestamps do not ascend or leave D24. Returns their step when they are evenly spaced (the
 * header's first and the step say them all: a writer may compute them as integers, and with
 * fillEven false they are not written to `timestamps` at all), 0 when they are not. */
int64_t DecodeBlock(const uint8_t* data, size_t size, const BlockHeader& header, double* timestamps,
                    ColumnOut* columns, bool fillEven = true);

/**
 * A block decoded for scanning its numeric columns and reading a few rows'
 * cells (the chart, chart.h), leaving encoded what that does not need:
 * evenly spaced timestamps stay a first second and a step, decimal Single
 * and Double columns stay mantissas (in the values' order, the exceptions
 * stored beside them aside), flags in runs stay runs. Decode refuses exactly
 * the blocks DecodeBlock refuses. Meant to be reused: its buffers keep their
 * capacity from block to block.
 *
 * Or a part at a time (D65 segments, block-segments.h): Locate reads the
 * block's framing and timestamps and leaves every column's rows encoded,
 * DecodeRows then decodes the rows asked, and only those may be read.
 */
class ScanBlock {
 public:
  /** Throws CorruptBlock. */
  void Decode(const uint8_t* data, size_t size);

  /** Reads the header, checksum (unless `checked` already), timestamps and where each column's
   * rows lie, decoding none of them; throws CorruptBlock for a block whose framing Decode would
   * refuse. */
  void Locate(const uint8_t* data, size_t size, bool checked = false);
  /** Whether a located block may be decoded a range of rows at a time: not when a hostile block
   * lists a column's float exceptions out of order (Decode it whole). */
  [[nodiscard]] bool Partial() const { return partial_; }
  /** Decodes rows [lo, hi) of a located block. at[c] is SequenceAt(c, lo) of the whole block (the
   * delta form cannot know it without the rows before; unused when lo is 0). Throws CorruptBlock
   * for rows Decode would refuse. Values() then covers the rows decoded since the last call that
   * did not continue the one before. */
  void DecodeRows(uint32_t lo, uint32_t hi, const int64_t* at);
  /** After Decode: the integer column c's sequence holds at row i (a decimal column's mantissa, a
   * Flag's id; 0 where the column has none), which DecodeRows needs to start there. */
  [[nodiscard]] int64_t SequenceAt(uint8_t c, uint32_t i) const;

  [[nodiscard]] const BlockHeader& header() const { return h_; }
  [[nodiscard]] int64_t Time(uint32_t i) const {
    return even_ ? first_ + step_ * static_cast<int64_t>(i) : static_cast<int64_t>(ts_[i]);
  }
  /** The first of rows [lo, hi) at or after second t; hi when none is. */
  [[nodiscard]] uint32_t LowerBound(int64_t t, uint32_t lo, uint32_t hi) const;
  [[nodiscard]] bool Missing(uint8_t c, uint32_t i) const {
    return cols_[c].anyMissing && cols_[c].missing[i];
  }
  /** The missing flags of a column (a byte a row), or null when none is missing. */
  [[nodiscard]] const uint8_t* MissingFlags(uint8_t c) const {
    return cols_[c].anyMissing ? cols_[c].missing.data() : nullptr;
  }
  /** The mantissas of a decimal Single or Double column without missing values, or null; rows
   * Exceptional() says hold none. */
  [[nodiscard]] const int64_t* Mantissas(uint8_t c) const;
  /** Whether any of rows [i, j) of a decimal column is stored as it is (NaN, -0, values no decimal
   * reads back exactly). */
  [[nodiscard]] bool Exceptional(uint8_t c, uint32_t i, uint32_t j) const;
  /** The float (Single) or double (Double) values of a column, computed on first use. */
  const void* Values(uint8_t c);
  /** A cell's bits as stored (float, double or int32, in the low bytes); 0 when missing. */
  [[nodiscard]] uint64_t Cell(uint8_t c, uint32_t i) const;
  /** A Single or Double cell as a double (the decimal's value, by the same rule as DecodeBlock). */
  [[nodiscard]] double Value(uint8_t c, uint32_t i) const;

 private:
  struct Column {
    bool anyMissing = false;
    std::vector<uint8_t> missing;
    bool decimal = false;  // mantissas and exceptions hold the values
    uint8_t exponent = 0;
    std::vector<int64_t> mantissas;
    std::vector<uint32_t> exceptionRows;  // strictly ascending
    std::vector<uint64_t> exceptionBits;
    bool valuesReady = false;
    std::vector<uint64_t> values;  // room for a double a row
    bool runs = false;             // a Flag column in runs: runStarts and runIds
    std::vector<uint32_t> runStarts;
    std::vector<int32_t> runIds;
    std::vector<int32_t> flags;  // a Flag column otherwise
    // Where its rows lie (Locate): a missing bitmap, raw values, mantissas or flag ids.
    const uint8_t* bitmap = nullptr;
    const uint8_t* raw = nullptr;
    bool sequence = false;  // seq holds the mantissas or flag ids
    IntSection seq;
    bool unordered = false;  // float exceptions out of order (hostile): only a whole decode
  };
  template <typename T>
  void ReadFloatColumn(Reader& r, Column& col);
  void ReadFlagColumn(Reader& r, Column& col);

  BlockHeader h_{};
  bool partial_ = true;
  // The rows Values() covers: those decoded since DecodeRows last started anew.
  uint32_t windowLo_ = 0, windowHi_ = 0;
  bool even_ = false;
  int64_t first_ = 0, step_ = 0;
  std::vector<double> ts_;
  std::vector<Column> cols_;
};

}  // namespace meridian
