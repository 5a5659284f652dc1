// The columns of a ValuesChunk (proto/meridian/timeseries/v1), written in
// protobuf wire form straight from an encoded block: field 2, the packed
// timestamps, and one field 3 per data field, a ValueColumn message with its
// packed singles (1), doubles (2) or flags (3) and the missing flag rows (4).
// Each part is a field's length-delimited payload (length varint, then the
// bytes), as protobuf-es keeps an unknown field, so the JS side sends them
// without building a value per row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "block-view.h"

namespace meridian {

struct ColumnParts {
  /** [timestamps, column 1, column 2, ...], each length-prefixed. */
  std::vector<std::vector<uint8_t>> parts;
  Taken taken;
};

/** The rows of the block in [from, to], at most maxRows, as ValuesChunk parts. Throws CorruptBlock. */
ColumnParts WriteBlockColumns(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows);

}  // namespace meridian
