#include "block-summary.h"

#include <cmath>

#include "bytes.h"
#include "crc32c.h"

namespace meridian {
namespace {

bool Numeric(FieldKind k) { return k == FieldKind::kSingle || k == FieldKind::kDouble; }

size_t RoleCount(uint8_t columns) { return 2 + 2 * static_cast<size_t>(columns); }

/** Bytes of everything before the rows. */
size_t HeadBytes(uint8_t columns) { return 2 + columns + 4 + 1 + RoleCount(columns); }

size_t RowBytes(uint8_t columns) { return 8 + 9 * static_cast<size_t>(columns); }

}  // namespace

std::vector<uint8_t> EncodeSummary(const BlockSummary& s) {
  Writer w;
  w.U8(kSummaryVersion);
  w.U8(s.columns);
  for (uint8_t c = 0; c < s.columns; c++) w.U8(static_cast<uint8_t>(s.kinds[c]));
  w.U32(s.blockRows);
  w.U8(static_cast<uint8_t>(s.rows.size()));
  for (uint8_t r : s.roles) w.U8(r);
  for (const ChartRow& row : s.rows) {
    w.I64(row.t);
    for (uint8_t c = 0; c < s.columns; c++) {
      w.U8(row.missing[c]);
      w.Raw(&row.cells[c], 8);
    }
  }
  w.U32(Crc32c(w.data(), w.size()));
  return std::move(w.bytes());
}

void ReadSummary(const uint8_t* data, size_t size, BlockSummary* out) {
  if (size < 2 + 4) throw CorruptSummary("truncated");
  uint32_t crc;
  std::memcpy(&crc, data + size - 4, 4);
  if (Crc32c(data, size - 4) != crc) throw CorruptSummary("checksum mismatch");
  if (data[0] != kSummaryVersion) throw CorruptSummary("unknown version");
  const uint8_t columns = data[1];
  if (size - 4 < HeadBytes(columns)) throw CorruptSummary("truncated");
  BlockSummary& s = *out;
  s.columns = columns;
  Reader r(data + 2, size - 6);
  for (uint8_t c = 0; c < columns; c++) {
    const uint8_t k = r.U8();
    if (k > static_cast<uint8_t>(FieldKind::kFlag)) throw CorruptSummary("unknown field kind");
    s.kinds[c] = static_cast<FieldKind>(k);
  }
  s.blockRows = r.U32();
  const uint8_t n = r.U8();
  const size_t roles = RoleCount(columns);
  if (n == 0 || n > roles || n > s.blockRows || s.blockRows > kMaxBlockRows)
    throw CorruptSummary("row counts out of range");
  if (size - 4 != HeadBytes(columns) + n * RowBytes(columns))
    throw CorruptSummary("size does not match its rows");
  s.roles.resize(roles);
  std::vector<bool> used(n, false);
  for (size_t k = 0; k < roles; k++) {
    const uint8_t i = r.U8();
    s.roles[k] = i;
    if (i == kNoRow) continue;
    if (i >= n) throw CorruptSummary("a role names no row");
    used[i] = true;
  }
  s.rows.resize(n);
  for (uint8_t i = 0; i < n; i++) {
    ChartRow& row = s.rows[i];
    row.t = r.I64();
    if (row.t < kMinTimestamp || row.t > kMaxTimestamp)
      throw CorruptSummary("timestamp outside D24");
    if (i > 0 && row.t <= s.rows[i - 1].t) throw CorruptSummary("rows not in ascending time");
    if (!used[i]) throw CorruptSummary("a row that holds no role");
    row.cells.resize(columns);
    row.missing.resize(columns);
    for (uint8_t c = 0; c < columns; c++) {
      const uint8_t m = r.U8();
      uint64_t bits;
      std::memcpy(&bits, r.Take(8), 8);
      if (m > 1 || (m == 1 && bits != 0)) throw CorruptSummary("a missing cell with a value");
      if (s.kinds[c] != FieldKind::kDouble && (bits >> 32) != 0)
        throw CorruptSummary("a cell wider than its kind");
      row.missing[c] = m;
      row.cells[c] = bits;
    }
  }
  // The first and last rows are the block's ends; a minimum and maximum are values of their column
  // and bound every value held, the earliest of equal ones.
  if (s.roles[0] != 0 || s.roles[1] != n - 1) throw CorruptSummary("first or last row misplaced");
  for (uint8_t c = 0; c < columns; c++) {
    const uint8_t lo = s.roles[2 + 2 * c], hi = s.roles[3 + 2 * c];
    if (!Numeric(s.kinds[c]) || lo == kNoRow || hi == kNoRow) {
      if (lo != hi) throw CorruptSummary("a minimum without a maximum, or one for a flag");
      if (lo != kNoRow) throw CorruptSummary("a minimum without a maximum, or one for a flag");
    }
    const bool any = lo != kNoRow;
    const double vmin = any ? CellValue(s.kinds[c], s.rows[lo].cells[c]) : 0;
    const double vmax = any ? CellValue(s.kinds[c], s.rows[hi].cells[c]) : 0;
    if (any &&
        (s.rows[lo].missing[c] || s.rows[hi].missing[c] || std::isnan(vmin) || std::isnan(vmax)))
      throw CorruptSummary("a minimum or maximum that is missing or NaN");
    if (!Numeric(s.kinds[c])) continue;
    for (uint8_t i = 0; i < n; i++) {
      if (s.rows[i].missing[c]) continue;
      const double v = CellValue(s.kinds[c], s.rows[i].cells[c]);
      if (std::isnan(v)) continue;
      if (!any || v < vmin || v > vmax || (v == vmin && i < lo) || (v == vmax && i < hi))
        throw CorruptSummary("a value beyond its column's minimum or maximum");
    }
  }
}

}  // namespace meridian
