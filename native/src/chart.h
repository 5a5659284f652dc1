// The chart read (D50): M4 (Jugel et al., VLDB 2014) over the blocks of one
// series. The range [from, to] is cut into `width` equal time buckets (the row
// at second t falls in floor((t - from) * width / (to - from + 1))); of each
// bucket the rows holding the first and last timestamp and, per Single and
// Double field, the minimum and maximum value (missing values and NaN
// skipped; of equal values the earliest row) are kept. A line drawn through
// them is pixel for pixel the line through all rows.
//
// Blocks arrive in time order; a bucket's candidates are merged across the
// blocks it spans, so a bucket is final once a later one begins and only one
// bucket is ever open. Each block is decoded by a ScanBlock (block-codec.h),
// which leaves encoded what the scan does not need, and candidates are copied
// out of it (its buffers are reused); what a chart keeps grows with its width,
// never with the rows read. A batch of blocks runs on helper threads
// (helper-thread.h) while the caller fetches the next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <utility>
#include <vector>

#include "block-codec.h"
#include "block-segments.h"
#include "block-summary.h"

namespace meridian {

constexpr uint32_t kMaxChartWidth = 10000;

/** The buckets of a chart: [from, to] in `width` equal parts. */
struct ChartRange {
  int64_t from;
  int64_t to;
  uint32_t width;
  /** The bucket of a second in [from, to]. Exact: (to - from) * width stays far below 2^63 (D24,
   * width <= 10,000 by the caller). */
  [[nodiscard]] uint32_t BucketOf(int64_t t) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(t - from) * width / Span());
  }
  /** The first second of bucket k (k <= width: width gives to + 1). */
  [[nodiscard]] int64_t StartOf(uint32_t k) const {
    return from + static_cast<int64_t>((static_cast<uint64_t>(k) * Span() + width - 1) / width);
  }
  [[nodiscard]] uint64_t Span() const { return static_cast<uint64_t>(to - from) + 1; }
};

/** What a chart reads, in time order: a stored block, or the summary of one (block-summary.h)
 * that lies wholly inside one bucket; a block may come with its segments (block-segments.h). */
struct ChartItem {
  const uint8_t* data;
  size_t size;
  bool summary;
  const uint8_t* segments = nullptr;
  size_t segmentsSize = 0;
};

class Chart {
 public:
  /** Throws std::invalid_argument unless from <= to and 1 <= width <= kMaxChartWidth. */
  Chart(int64_t from, int64_t to, uint32_t width);

  /** Adds the rows of a block (the next in time order) that lie in the range. Throws CorruptBlock,
   * or std::invalid_argument for a block with other columns than the first, or rows not after the
   * last block's. */
  void Add(const uint8_t* data, size_t size);

  /** Adds a block by its summary (D65): the rows the block would give, for a block lying wholly
   * inside one bucket of the range. Throws CorruptSummary, or std::invalid_argument for a summary
   * of other columns, out of time order, or of a block a bucket edge or the range's end cuts. */
  void AddSummary(const uint8_t* data, size_t size);

  /** The summary of a block (D65): its rows chosen as a one-bucket chart over the block chooses
   * them. Throws CorruptBlock, CorruptSummary for a hostile block whose summary would not read
   * back, or std::invalid_argument for a block without rows. */
  static std::vector<uint8_t> Summarize(const uint8_t* data, size_t size);

  /** Adds a block as Add does, decoding only the segments (block-segments.h) that a bucket edge or
   * an end of the range falls in and taking the others by their summaries. Throws as Add does, or
   * CorruptSummary for segments that are not this block's. */
  void AddSegmented(const uint8_t* data, size_t size, const uint8_t* segments, size_t segmentsSize);

  /** A block's segments of `segmentRows` rows (block-segments.h): each one's summary, as Summarize
   * writes a block's, and where its sequences stand. Throws CorruptBlock, CorruptSummary for a
   * hostile block whose segment would not read back, or std::invalid_argument for segmentRows
   * outside 1..kMaxBlockRows. */
  static std::vector<uint8_t> Segment(const uint8_t* data, size_t size, uint32_t segmentRows);

  ~Chart();
  Chart(const Chart&) = delete;
  Chart& operator=(const Chart&) = delete;

  /** Adds blocks and summaries in time order, as Add and AddSummary one by one; a run of several is
   * split between this thread and a second one. */
  void AddAll(const std::vector<ChartItem>& items);

  /**
   * AddAll on a helper thread, returning at once, so that the caller can
   * fetch the next blocks meanwhile; they must stay alive and unchanged until
   * the next Begin, Wait or Finish, which wait for it first and throw what it
   * threw. When the helper is busy, AddAll runs here instead.
   */
  void Begin(std::vector<ChartItem> items);
  /** Waits for the batch Begin started; throws what it threw. */
  void Wait();

  /** Waits for a batch begun; the chosen rows, in time order without repeats, encoded as blocks of
   * up to kMaxBlockRows; none when the range held no rows. Ends the chart. */
  std::vector<std::vector<uint8_t>> Finish();

 private:
  // A bucket's candidates: role 0 first, 1 last, then per column c a min (2 + 2c) and a max (3 +
  // 2c); only Single and Double columns have them.
  struct Role {
    bool set = false;
    double value = 0;  // the min or max compared
    ChartRow row;
  };
  struct Bucket {
    uint32_t k = 0;
    std::vector<Role> roles;
  };
  /** Takes the series' data fields from the first block; throws for a later block with others. */
  void Fields(uint8_t columns, const FieldKind* kinds);
  /** Notes rows from first to last seconds; throws unless they come after every row before. */
  void See(int64_t first, int64_t last);
  void Open(uint32_t bucket);
  void Close();
  void Take(Role& role, const ScanBlock& b, uint32_t i, double value);
  void Scan(ScanBlock& b, uint32_t begin, uint32_t stop);
  /** Rows [i, j) of a block into the open bucket, which holds them all. */
  void ScanSpan(ScanBlock& b, uint32_t i, uint32_t j);
  /** A summary's rows into the open bucket, by the one rule. */
  void Merge(const BlockSummary& s);
  /** Opens bucket k unless it is the open one. */
  void Enter(uint32_t k);
  /** The summary of the rows a one-bucket chart gathered, of a block or segment of `rows` rows. */
  static std::vector<uint8_t> SummaryOf(const Chart& one, uint32_t rows);
  void AddItem(const ChartItem& item);
  void Rethrow();
  /** Takes over what `later` gathered from the blocks after this chart's (AddAll's second thread).
   */
  void Absorb(Chart& later);

  ChartRange range_;
  bool started_ = false;
  uint8_t columns_ = 0;
  FieldKind kinds_[kMaxColumns];
  int64_t firstSeen_ = 0, lastSeen_ = 0;
  bool seen_ = false;
  bool open_ = false;
  Bucket cur_;
  // A chart of later blocks keeps its first bucket's candidates (that bucket may go on in the chart
  // before it) instead of writing its rows.
  bool keepHead_ = false;
  bool hasHead_ = false;
  Bucket head_;
  std::vector<ChartRow> out_;
  // A batch on the helper (Begin), and what it threw.
  bool running_ = false;
  std::exception_ptr failed_;
};

}  // namespace meridian
