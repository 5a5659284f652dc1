// A block's segments (D65, issue 30 item 3): the block cut into segments of
// S rows, each with its summary (block-summary.h: the whole rows of its
// first, last, minimum and maximum) and, per column, the integer its sequence
// holds at the segment's first row (int-sequence.h: what a delta-coded
// sequence needs to be decoded from there). A chart bucket smaller than a
// block then decodes only the segments a bucket edge falls in, and takes the
// segments lying wholly inside a bucket by their summaries (chart.h
// Chart::Segment, AddSegmented). Kept in memory beside a hot block's payload
// (the block cache), never stored; built from a block that decodes, and read
// only with that block: it names the block's checksum.
//
// Layout (little endian):
//   u32 the block's CRC-32C, u32 segment rows (S), u32 segments (m), u8 columns
//   per segment, per column: i64 the sequence's integer at the segment's first row,
//     f64 its summary's minimum and f64 maximum (NaN when it has none, and for a Flag)
//   (m + 1) u32 offsets of the summaries, from the first; the summaries
//   u32 CRC-32C of everything before it
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace meridian {

/** A block's segments, read and checked (ReadSegments); views into the bytes read. */
struct BlockSegments {
  uint32_t blockCrc = 0;
  uint32_t segmentRows = 0;
  uint32_t count = 0;
  uint8_t columns = 0;
  const uint8_t* starts = nullptr;
  const uint8_t* offsets = nullptr;
  const uint8_t* summaries = nullptr;

  /** Column c's sequence integer at segment k's first row. */
  [[nodiscard]] int64_t Start(uint32_t k, uint8_t c) const {
    int64_t v;
    std::memcpy(&v, starts + (static_cast<size_t>(k) * columns + c) * kColumnBytes, 8);
    return v;
  }
  /** Column c's least (which 0) or greatest (1) value in segment k, as its summary holds it; NaN
   * when it holds none. */
  [[nodiscard]] double Extreme(uint32_t k, uint8_t c, size_t which) const {
    double v;
    std::memcpy(&v, starts + (static_cast<size_t>(k) * columns + c) * kColumnBytes + 8 + 8 * which,
                8);
    return v;
  }
  static constexpr size_t kColumnBytes = 24;
  /** Segment k's summary: its bytes and their size. */
  [[nodiscard]] const uint8_t* Summary(uint32_t k, size_t* size) const {
    uint32_t a, b;
    std::memcpy(&a, offsets + 4 * static_cast<size_t>(k), 4);
    std::memcpy(&b, offsets + 4 * (static_cast<size_t>(k) + 1), 4);
    *size = b - a;
    return summaries + a;
  }
};

/** Bytes of a block's segments: its checksum, the segment size, per segment its start integers
 * and extremes (columns of each: extremes a minimum and maximum per column) and its summary. */
std::vector<uint8_t> EncodeSegments(uint32_t blockCrc, uint32_t segmentRows, uint8_t columns,
                                    const std::vector<int64_t>& starts,
                                    const std::vector<double>& extremes,
                                    const std::vector<std::vector<uint8_t>>& summaries);

/** Reads and checks a block's segments (checksum, layout, offsets ascending inside the bytes; the
 * summaries themselves are checked as each is read). Throws CorruptSummary. */
void ReadSegments(const uint8_t* data, size_t size, BlockSegments* out);

}  // namespace meridian
