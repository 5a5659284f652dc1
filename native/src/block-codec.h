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
#include <vector>

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

struct ColumnIn {
  FieldKind kind;
  /** float, double or int32 values, one per row. */
  const void* values;
  /** One byte per row, non-zero where the value is missing; null when none is. */
  const uint8_t* missing;
};

/** Encodes whole-second timestamps, strictly ascending, inside D24; throws std::invalid_argument for any outside D24. */
std::vector<uint8_t> EncodeBlock(const double* timestamps, uint32_t rows, const ColumnIn* columns, uint8_t count);

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

struct ColumnOut {
  /** header.rows floats, doubles or int32s, by the column's kind. */
  void* values;
  /** header.rows bytes; filled (1 where a value is missing) only when anyMissing comes back true. */
  uint8_t* missing;
  /** Set by the decoder. */
  bool anyMissing;
};

/** Decodes a block whose header ReadBlockHeader returned; throws CorruptBlock, also when its timestamps do not ascend or leave D24. */
void DecodeBlock(const uint8_t* data, size_t size, const BlockHeader& header, double* timestamps, ColumnOut* columns);

}  // namespace meridian
