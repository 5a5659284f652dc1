#include "block-segments.h"

#include "block-summary.h"
#include "bytes.h"
#include "crc32c.h"

namespace meridian {

std::vector<uint8_t> EncodeSegments(uint32_t blockCrc, uint32_t segmentRows, uint8_t columns,
                                    const std::vector<int64_t>& starts,
                                    const std::vector<double>& extremes,
                                    const std::vector<std::vector<uint8_t>>& summaries) {
  Writer w;
  w.U32(blockCrc);
  w.U32(segmentRows);
  w.U32(static_cast<uint32_t>(summaries.size()));
  w.U8(columns);
  for (size_t i = 0; i < starts.size(); i++) {
    w.I64(starts[i]);
    w.Raw(&extremes[2 * i], 16);
  }
  uint32_t at = 0;
  w.U32(at);
  for (const std::vector<uint8_t>& s : summaries) w.U32(at += static_cast<uint32_t>(s.size()));
  for (const std::vector<uint8_t>& s : summaries) w.Raw(s.data(), s.size());
  w.U32(Crc32c(w.data(), w.size()));
  return std::move(w.bytes());
}

void ReadSegments(const uint8_t* data, size_t size, BlockSegments* out) {
  constexpr size_t kHead = 4 + 4 + 4 + 1;
  if (size < kHead + 4 + 4) throw CorruptSummary("segments truncated");
  uint32_t crc;
  std::memcpy(&crc, data + size - 4, 4);
  if (Crc32c(data, size - 4) != crc) throw CorruptSummary("segments checksum mismatch");
  BlockSegments& g = *out;
  std::memcpy(&g.blockCrc, data, 4);
  std::memcpy(&g.segmentRows, data + 4, 4);
  std::memcpy(&g.count, data + 8, 4);
  g.columns = data[12];
  // Both at most a block's rows: a chart's row arithmetic stays far inside 32 bits.
  if (g.segmentRows == 0 || g.segmentRows > kMaxBlockRows || g.count == 0 ||
      g.count > kMaxBlockRows)
    throw CorruptSummary("segment counts out of range");
  const size_t starts = static_cast<size_t>(g.count) * g.columns * BlockSegments::kColumnBytes;
  const size_t offsets = (static_cast<size_t>(g.count) + 1) * 4;
  if (size - 4 < kHead + starts + offsets) throw CorruptSummary("segments truncated");
  g.starts = data + kHead;
  g.offsets = g.starts + starts;
  g.summaries = g.offsets + offsets;
  const size_t room = size - 4 - (kHead + starts + offsets);
  uint32_t before = 0;
  for (uint32_t k = 0; k <= g.count; k++) {
    uint32_t at;
    std::memcpy(&at, g.offsets + 4 * static_cast<size_t>(k), 4);
    if ((k == 0 && at != 0) || at < before || at > room)
      throw CorruptSummary("segment offsets out of order");
    before = at;
  }
  if (before != room) throw CorruptSummary("segments' size does not match their summaries");
}

}  // namespace meridian
