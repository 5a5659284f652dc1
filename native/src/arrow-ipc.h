// The Apache Arrow IPC stream format (D64), written straight from encoded
// blocks: a schema message once per series, one record batch message per
// block (the rows of it a read takes), and the end-of-stream marker. Columns:
// `timestamp` as timestamp[ms, UTC], then one per data field, named as the
// field: Single float32, Double float64, Flag int32 (flag ids are int32 in
// the domain). A missing value, or one that is not finite (as the JSON read
// writes null for it, D25), is a null in the column's validity bitmap.
//
// The flatbuffer metadata (format/Schema.fbs, Message.fbs) is written by a
// small front-to-back builder here rather than by the flatbuffers library:
// the few tables a stream needs are fixed, and the addon stays without
// dependencies. Batches are sized before a byte is written, so the caller
// hands in a buffer (a pooled one, D28) and gets back how much it took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "block-view.h"

namespace meridian {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct ArrowField {
  std::string name;
  FieldKind kind;
};

/** The schema message: `timestamp`, then the fields; metadata as the schema's custom_metadata. */
std::vector<uint8_t> ArrowSchemaMessage(const std::vector<ArrowField>& fields,
                                        const KeyValues& metadata);

/** A record batch of no rows over `columns` data fields, its Message carrying `metadata` (a page's
 * cursor). */
std::vector<uint8_t> ArrowEmptyBatch(uint8_t columns, const KeyValues& metadata);

/** The end-of-stream marker: a continuation and a zero length. */
constexpr uint8_t kArrowEndOfStream[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};

/** A block's rows of [from, to], at most maxRows, as one record batch message. */
class ArrowBatchWriter {
 public:
  /** Decodes the block and sizes the message. Throws CorruptBlock. */
  ArrowBatchWriter(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows);

  [[nodiscard]] const Taken& taken() const { return range_.taken; }
  /** Bytes of the whole message (a multiple of 8). */
  [[nodiscard]] size_t size() const { return 8 + metadata_.size() + body_; }
  /** Writes the message into out (size() bytes). */
  void Write(uint8_t* out) const;

 private:
  BlockView block_;
  BlockView::Range range_;
  /** Per column (timestamp first): nulls among the rows taken. */
  std::vector<uint32_t> nulls_;
  std::vector<uint8_t> metadata_;  // padded to a multiple of 8
  size_t body_ = 0;
};

/** A block's encoded bytes, as a group of them is handed to a writer off the event loop. */
struct Payload {
  const uint8_t* data;
  size_t size;
};

/** What a group of blocks gave: bytes written, rows in all, the last row's timestamp, and whether
 * rows of the last block's range follow (when maxRows stopped it). */
struct GroupTaken {
  size_t written;
  uint64_t rows;
  int64_t last;
  bool more;
};

/**
 * The blocks' rows of [from, to], at most maxRows in all, as one record batch message per block
 * with rows, back to back into out: what the per-block writer gives for each, in one call, so a
 * group of blocks can be written on a worker thread (D64). Stops at the block that reaches maxRows.
 * Throws CorruptBlock, and std::length_error when out is smaller than ArrowBatchBound promised.
 */
GroupTaken WriteArrowBatches(const std::vector<Payload>& blocks, int64_t from, int64_t to,
                             uint64_t maxRows, uint8_t* out, size_t capacity);

/** The most bytes ArrowBatchWriter takes for `rows` rows of a block with these fields (every
 * column with a validity bitmap). */
size_t ArrowBatchBound(uint32_t rows, const std::vector<FieldKind>& kinds);

}  // namespace meridian
