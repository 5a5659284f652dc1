#include "chart.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>

#include "extremes.h"
#include "helper-thread.h"

namespace meridian {
namespace {

bool Numeric(FieldKind k) { return k == FieldKind::kSingle || k == FieldKind::kDouble; }

/**
 * Whether a candidate for role r with value v takes the place of the one held
 * (of the earlier rows): the first row stays, the last is replaced, a min or
 * max only by a strictly smaller or larger value (of equal values the
 * earliest row). The one rule for rows of one block and across blocks.
 */
bool Replaces(size_t r, bool held, double heldValue, double v) {
  if (!held) return true;
  if (r == 0) return false;
  if (r == 1) return true;
  return r % 2 == 0 ? v < heldValue : v > heldValue;
}

// Below this many blocks a second thread costs more than it saves.
constexpr size_t kSplitBlocks = 4;

}  // namespace

Chart::Chart(int64_t from, int64_t to, uint32_t width) : range_{from, to, width} {
  if (from > to || width < 1 || width > kMaxChartWidth)
    throw std::invalid_argument("chart: from <= to and 1 <= width <= 10000");
}

void Chart::Take(Role& role, const ScanBlock& b, uint32_t i, double value) {
  role.set = true;
  role.value = value;
  role.row.t = b.Time(i);
  role.row.cells.resize(columns_);
  role.row.missing.resize(columns_);
  for (uint8_t c = 0; c < columns_; c++) {
    role.row.cells[c] = b.Cell(c, i);
    role.row.missing[c] = b.Missing(c, i) ? 1 : 0;
  }
}

void Chart::Fields(uint8_t columns, const FieldKind* kinds) {
  if (!started_) {
    started_ = true;
    columns_ = columns;
    std::copy(kinds, kinds + columns, kinds_);
    cur_.roles.assign(2 + 2 * static_cast<size_t>(columns_), Role{});
  } else if (columns != columns_ || !std::equal(kinds, kinds + columns, kinds_)) {
    throw std::invalid_argument("chart: a block with other data fields than the series'");
  }
}

void Chart::See(int64_t first, int64_t last) {
  // Buckets close as later ones open: blocks must come in time order.
  if (seen_ && first <= lastSeen_) throw std::invalid_argument("chart: blocks out of time order");
  if (!seen_) firstSeen_ = first;
  seen_ = true;
  lastSeen_ = last;
}

void Chart::Open(uint32_t bucket) {
  open_ = true;
  cur_.k = bucket;
  for (Role& r : cur_.roles) r.set = false;
}

void Chart::Close() {
  if (!open_) return;
  open_ = false;
  if (keepHead_ && !hasHead_) {
    hasHead_ = true;
    head_ = cur_;
    return;
  }
  const size_t before = out_.size();
  for (Role& r : cur_.roles)
    if (r.set) out_.push_back(r.row);
  const auto first = out_.begin() + static_cast<std::ptrdiff_t>(before);
  std::sort(first, out_.end(), [](const ChartRow& a, const ChartRow& b) { return a.t < b.t; });
  // A row chosen for several roles appears once (timestamps are unique in a series).
  out_.erase(std::unique(first, out_.end(),
                         [](const ChartRow& a, const ChartRow& b) { return a.t == b.t; }),
             out_.end());
}

void Chart::Enter(uint32_t k) {
  if (open_ && k == cur_.k) return;
  Close();
  Open(k);
}

void Chart::Scan(ScanBlock& b, uint32_t begin, uint32_t stop) {
  for (uint32_t i = begin; i < stop;) {
    const uint32_t k = range_.BucketOf(b.Time(i));
    const uint32_t j = b.LowerBound(range_.StartOf(k + 1), i, stop);
    Enter(k);
    ScanSpan(b, i, j);
    i = j;
  }
}

void Chart::ScanSpan(ScanBlock& b, uint32_t i, uint32_t j) {
  std::vector<Role>& roles = cur_.roles;
  if (Replaces(0, roles[0].set, 0, 0)) Take(roles[0], b, i, 0);
  Take(roles[1], b, j - 1, 0);
  for (uint8_t c = 0; c < columns_; c++) {
    if (!Numeric(kinds_[c])) continue;
    const int64_t* mantissas = b.Mantissas(c);
    Extremes e;
    if (mantissas != nullptr && !b.Exceptional(c, i, j)) {
      e = MantissaExtremes(mantissas, i, j);
    } else {
      const void* values = b.Values(c);
      e = kinds_[c] == FieldKind::kSingle ? ValueExtremes<float>(values, b.MissingFlags(c), i, j)
                                          : ValueExtremes<double>(values, b.MissingFlags(c), i, j);
    }
    if (e.min < 0) continue;
    const size_t lo = 2 + 2 * static_cast<size_t>(c), hi = lo + 1;
    const double vmin = b.Value(c, static_cast<uint32_t>(e.min)),
                 vmax = b.Value(c, static_cast<uint32_t>(e.max));
    if (Replaces(lo, roles[lo].set, roles[lo].value, vmin))
      Take(roles[lo], b, static_cast<uint32_t>(e.min), vmin);
    if (Replaces(hi, roles[hi].set, roles[hi].value, vmax))
      Take(roles[hi], b, static_cast<uint32_t>(e.max), vmax);
  }
}

void Chart::Merge(const BlockSummary& s) {
  // The rows merged by the one rule, as ScanSpan merges a block's part of a bucket.
  for (size_t r = 0; r < cur_.roles.size(); r++) {
    const uint8_t i = s.roles[r];
    if (i == kNoRow) continue;
    const double v = r < 2 ? 0 : CellValue(kinds_[(r - 2) / 2], s.rows[i].cells[(r - 2) / 2]);
    Role& role = cur_.roles[r];
    if (!Replaces(r, role.set, role.value, v)) continue;
    role.set = true;
    role.value = v;
    role.row = s.rows[i];
  }
}

void Chart::Add(const uint8_t* data, size_t size) {
  thread_local ScanBlock b;  // one per thread: its buffers are reused from block to block
  b.Decode(data, size);
  const BlockHeader& h = b.header();
  Fields(h.columns, h.kinds);
  const uint32_t begin = b.LowerBound(range_.from, 0, h.rows);
  const uint32_t stop = b.LowerBound(range_.to + 1, begin, h.rows);
  if (stop == begin) return;
  See(b.Time(begin), b.Time(stop - 1));
  Scan(b, begin, stop);
}

void Chart::AddSummary(const uint8_t* data, size_t size) {
  thread_local BlockSummary s;  // its rows' buffers are reused from summary to summary
  ReadSummary(data, size, &s);
  Fields(s.columns, s.kinds);
  const int64_t first = s.rows.front().t, last = s.rows.back().t;
  if (first < range_.from || last > range_.to || range_.BucketOf(first) != range_.BucketOf(last))
    throw std::invalid_argument("chart: a summary for a block that a bucket edge cuts");
  See(first, last);
  Enter(range_.BucketOf(first));
  Merge(s);
}

std::vector<uint8_t> Chart::Summarize(const uint8_t* data, size_t size) {
  // One bucket over every second there is: the block's rows, chosen as any bucket chooses them.
  Chart one(kMinTimestamp, kMaxTimestamp, 1);
  one.Add(data, size);
  if (!one.open_) throw std::invalid_argument("summary: a block without rows");
  std::vector<uint8_t> summary = SummaryOf(one, ReadBlockHeader(data, size).rows);
  // Read back as a chart reads it: a hostile block's mantissas (two for one float) can order the
  // scan otherwise than the values, and such a block gets no summary (it is decoded at read).
  BlockSummary check;
  ReadSummary(summary.data(), summary.size(), &check);
  return summary;
}

std::vector<uint8_t> Chart::SummaryOf(const Chart& one, uint32_t rows) {
  BlockSummary s;
  s.columns = one.columns_;
  std::copy(one.kinds_, one.kinds_ + one.columns_, s.kinds);
  s.blockRows = rows;
  for (const Role& r : one.cur_.roles)
    if (r.set) s.rows.push_back(r.row);
  std::sort(s.rows.begin(), s.rows.end(),
            [](const ChartRow& a, const ChartRow& b) { return a.t < b.t; });
  s.rows.erase(std::unique(s.rows.begin(), s.rows.end(),
                           [](const ChartRow& a, const ChartRow& b) { return a.t == b.t; }),
               s.rows.end());
  for (const Role& r : one.cur_.roles) {
    uint8_t i = kNoRow;
    if (r.set)
      i = static_cast<uint8_t>(
          std::lower_bound(s.rows.begin(), s.rows.end(), r.row.t,
                           [](const ChartRow& a, int64_t t) { return a.t < t; }) -
          s.rows.begin());
    s.roles.push_back(i);
  }
  return EncodeSummary(s);
}

namespace {

uint32_t StoredCrc(const uint8_t* data, size_t size) {
  uint32_t crc;
  std::memcpy(&crc, data + size - 4, 4);
  return crc;
}

}  // namespace

std::vector<uint8_t> Chart::Segment(const uint8_t* data, size_t size, uint32_t segmentRows) {
  if (segmentRows == 0 || segmentRows > kMaxBlockRows)
    throw std::invalid_argument("segments: 1 to 16536 rows each");
  ScanBlock b;
  b.Decode(data, size);
  const BlockHeader& h = b.header();
  const uint32_t count = (h.rows + segmentRows - 1) / segmentRows;
  std::vector<int64_t> starts;
  std::vector<double> extremes;
  BlockSummary check;
  std::vector<std::vector<uint8_t>> summaries;
  for (uint32_t k = 0; k < count; k++) {
    const uint32_t lo = k * segmentRows, hi = std::min(h.rows, lo + segmentRows);
    for (uint8_t c = 0; c < h.columns; c++) starts.push_back(b.SequenceAt(c, lo));
    // One bucket over every second there is, as Summarize charts a whole block.
    Chart one(kMinTimestamp, kMaxTimestamp, 1);
    one.Fields(h.columns, h.kinds);
    one.Enter(0);
    one.ScanSpan(b, lo, hi);
    for (uint8_t c = 0; c < h.columns; c++) {
      for (size_t r = 2 + 2 * static_cast<size_t>(c); r < 4 + 2 * static_cast<size_t>(c); r++) {
        const Role& role = one.cur_.roles[r];
        extremes.push_back(role.set ? role.value : std::nan(""));
      }
    }
    summaries.push_back(SummaryOf(one, hi - lo));
    // Read back as a chart reads it: a hostile block's mantissas (two for one float) can order a
    // scan otherwise than the values, and such a summary is refused here, not at each chart.
    ReadSummary(summaries.back().data(), summaries.back().size(), &check);
  }
  return EncodeSegments(StoredCrc(data, size), segmentRows, h.columns, starts, extremes, summaries);
}

void Chart::AddSegmented(const uint8_t* data, size_t size, const uint8_t* segments,
                         size_t segmentsSize) {
  thread_local ScanBlock b;
  thread_local BlockSummary s;
  thread_local std::vector<int64_t> at;
  thread_local std::vector<uint32_t> picks;
  BlockSegments g;
  ReadSegments(segments, segmentsSize, &g);
  // Segments are made from a block that decoded whole, checksum and all, and name that checksum:
  // bytes held in memory since (the block cache's) need not be summed again.
  if (size < 4 || g.blockCrc != StoredCrc(data, size))
    throw CorruptSummary("segments of another block");
  b.Locate(data, size, true);
  if (!b.Partial()) {
    Add(data, size);
    return;
  }
  const BlockHeader& h = b.header();
  const uint32_t rows = h.rows, n = g.segmentRows;
  if (g.columns != h.columns || g.count != (rows + n - 1) / n)
    throw CorruptSummary("segments of another block");
  Fields(h.columns, h.kinds);
  const uint32_t begin = b.LowerBound(range_.from, 0, rows);
  const uint32_t stop = b.LowerBound(range_.to + 1, begin, rows);
  if (stop == begin) return;
  See(b.Time(begin), b.Time(stop - 1));
  // Segments are decoded in time order, each once: `next` is the first not decoded yet.
  uint32_t next = 0;
  auto scan = [&](uint32_t i, uint32_t j) {
    for (uint32_t k = std::max(next, i / n); k <= (j - 1) / n; k = next) {
      at.resize(h.columns);
      for (uint8_t c = 0; c < h.columns; c++) at[c] = g.Start(k, c);
      b.DecodeRows(k * n, (k + 1) * n, at.data());
      next = k + 1;
    }
    ScanSpan(b, i, j);
  };
  for (uint32_t i = begin; i < stop;) {
    const uint32_t k = range_.BucketOf(b.Time(i));
    const uint32_t j = b.LowerBound(range_.StartOf(k + 1), i, stop);
    Enter(k);
    // Segments [whole, end) lie wholly inside [i, j); the rows before and after are scanned.
    const uint32_t whole = (i + n - 1) / n, end = j == rows ? g.count : j / n;
    if (whole >= end) {
      scan(i, j);
    } else {
      if (i < whole * n) scan(i, whole * n);
      // Of the segments wholly inside, those holding a role: the first, the last, and per field the
      // one with its least and its greatest value (the earliest of equal ones). Merged in time
      // order by the one rule they give the rows merging every one of them gives.
      picks.clear();
      picks.push_back(whole);
      picks.push_back(end - 1);
      for (uint8_t c = 0; c < h.columns; c++) {
        if (!Numeric(h.kinds[c])) continue;
        int64_t lo = -1, hi = -1;
        double least = 0, greatest = 0;
        for (uint32_t m = whole; m < end; m++) {
          const double a = g.Extreme(m, c, 0), z = g.Extreme(m, c, 1);
          if (!std::isnan(a) && (lo < 0 || a < least)) lo = m, least = a;
          if (!std::isnan(z) && (hi < 0 || z > greatest)) hi = m, greatest = z;
        }
        if (lo >= 0) picks.push_back(static_cast<uint32_t>(lo));
        if (hi >= 0) picks.push_back(static_cast<uint32_t>(hi));
      }
      std::sort(picks.begin(), picks.end());
      picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
      for (const uint32_t m : picks) {
        size_t bytes;
        const uint8_t* summary = g.Summary(m, &bytes);
        ReadSummary(summary, bytes, &s);
        if (s.columns != h.columns || !std::equal(s.kinds, s.kinds + s.columns, h.kinds) ||
            s.rows.front().t != b.Time(m * n) ||
            s.rows.back().t != b.Time(std::min(rows, (m + 1) * n) - 1))
          throw CorruptSummary("segments of another block");
        Merge(s);
      }
      if (end * n < j) scan(end * n, j);
    }
    i = j;
  }
}

void Chart::AddItem(const ChartItem& item) {
  if (item.segments != nullptr)
    AddSegmented(item.data, item.size, item.segments, item.segmentsSize);
  else if (item.summary)
    AddSummary(item.data, item.size);
  else
    Add(item.data, item.size);
}

void Chart::AddAll(const std::vector<ChartItem>& blocks) {
  const size_t n = blocks.size();
  if (n < kSplitBlocks) {
    for (const ChartItem& b : blocks) AddItem(b);
    return;
  }
  // The later half on a second thread, into a chart of its own, then taken over: the same result as
  // Add one by one.
  const size_t half = n / 2;
  Chart later(range_.from, range_.to, range_.width);
  later.keepHead_ = true;
  std::exception_ptr failed;
  auto rest = [&] {
    try {
      for (size_t i = half; i < n; i++) later.AddItem(blocks[i]);
    } catch (...) {
      failed = std::current_exception();
    }
  };
  Helper& helper = Helper::Get(Helper::kHalf);
  if (!helper.TryStart(rest)) {
    for (const ChartItem& b : blocks) AddItem(b);
    return;
  }
  try {
    for (size_t i = 0; i < half; i++) AddItem(blocks[i]);
  } catch (...) {
    helper.Wait();
    throw;
  }
  helper.Wait();
  if (failed) std::rethrow_exception(failed);
  Absorb(later);
}

void Chart::Begin(std::vector<ChartItem> blocks) {
  Wait();
  auto run = [this, blocks = std::move(blocks)] {
    try {
      AddAll(blocks);
    } catch (...) {
      failed_ = std::current_exception();
    }
  };
  // Queued when the batch helper is free; otherwise (another chart has it) done here and now.
  std::function<void()> job = run;
  if (Helper::Get(Helper::kBatch).TryStart(job)) {
    running_ = true;
    return;
  }
  run();
  Rethrow();
}

void Chart::Wait() {
  if (running_) {
    Helper::Get(Helper::kBatch).Wait();
    running_ = false;
  }
  Rethrow();
}

void Chart::Rethrow() {
  if (!failed_) return;
  std::exception_ptr e = failed_;
  failed_ = nullptr;
  std::rethrow_exception(e);
}

Chart::~Chart() {
  if (running_)
    Helper::Get(Helper::kBatch).Wait();  // the job reads this chart and the caller's blocks
}

void Chart::Absorb(Chart& later) {
  if (!later.started_) return;
  Fields(later.columns_, later.kinds_);
  if (!later.seen_) return;
  See(later.firstSeen_, later.lastSeen_);
  // Its first bucket: still open there when it saw only one.
  Bucket& head = later.hasHead_ ? later.head_ : later.cur_;
  if (open_ && cur_.k == head.k) {
    for (size_t r = 0; r < cur_.roles.size(); r++) {
      Role& mine = cur_.roles[r];
      const Role& theirs = head.roles[r];
      if (theirs.set && Replaces(r, mine.set, mine.value, theirs.value)) mine = theirs;
    }
  } else {
    Close();
    open_ = true;
    cur_ = head;
  }
  if (!later.hasHead_) return;
  Close();
  out_.insert(out_.end(), std::make_move_iterator(later.out_.begin()),
              std::make_move_iterator(later.out_.end()));
  open_ = later.open_;
  if (open_) cur_ = later.cur_;
}

std::vector<std::vector<uint8_t>> Chart::Finish() {
  Wait();
  Close();
  std::vector<std::vector<uint8_t>> blocks;
  std::vector<double> ts;
  std::vector<std::vector<uint64_t>> values(columns_);  // 8 bytes a row: room for any kind
  std::vector<std::vector<uint8_t>> missing(columns_);
  std::vector<ColumnIn> in(columns_);
  for (size_t start = 0; start < out_.size(); start += kMaxBlockRows) {
    const size_t n = std::min<size_t>(kMaxBlockRows, out_.size() - start);
    ts.resize(n);
    for (uint8_t c = 0; c < columns_; c++) {
      values[c].assign(n, 0);
      missing[c].assign(n, 0);
      const size_t width = kinds_[c] == FieldKind::kDouble ? 8 : 4;
      auto* to = reinterpret_cast<uint8_t*>(values[c].data());
      for (size_t i = 0; i < n; i++) {
        std::memcpy(to + i * width, &out_[start + i].cells[c], width);
        missing[c][i] = out_[start + i].missing[c];
      }
      in[c] = ColumnIn{kinds_[c], values[c].data(), missing[c].data()};
    }
    for (size_t i = 0; i < n; i++) ts[i] = static_cast<double>(out_[start + i].t);
    blocks.push_back(EncodeBlock(ts.data(), static_cast<uint32_t>(n), in.data(), columns_));
  }
  out_.clear();
  return blocks;
}

}  // namespace meridian
