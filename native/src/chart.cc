#include "chart.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

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

/** Where a bucket's smallest and largest value lie among rows [i, j), skipping missing rows and NaN; of equal values the first. */
struct Extremes {
  int64_t min = -1, max = -1;
};

template <typename T, bool kAnyMissing>
Extremes Scan(const T* v, const uint8_t* missing, uint32_t i, uint32_t j) {
  Extremes e;
  uint32_t k = i;
  while (k < j && ((kAnyMissing && missing[k]) || std::isnan(v[k]))) k++;
  if (k == j) return e;
  T lo = v[k], hi = v[k];
  e.min = e.max = k;
  for (k++; k < j; k++) {
    if (kAnyMissing && missing[k]) continue;
    const T x = v[k];  // NaN compares false both ways: skipped
    if (x < lo) lo = x, e.min = k;
    if (x > hi) hi = x, e.max = k;
  }
  return e;
}

#if defined(__SSE2__)
// Without missing values, two vector passes instead of one scalar pass whose
// every step waits on the last (about three times faster on W1): the
// smallest and largest values (minps/maxps keep the accumulator when the
// value is NaN, so NaN is skipped as in Scan), then the first row equal to
// each. Equal includes -0 == +0, as Scan's comparisons do.
struct Sse {
  static __m128 Min(__m128 a, __m128 b) { return _mm_min_ps(a, b); }
  static __m128d Min(__m128d a, __m128d b) { return _mm_min_pd(a, b); }
  static __m128 Max(__m128 a, __m128 b) { return _mm_max_ps(a, b); }
  static __m128d Max(__m128d a, __m128d b) { return _mm_max_pd(a, b); }
  static __m128 Load(const float* p) { return _mm_loadu_ps(p); }
  static __m128d Load(const double* p) { return _mm_loadu_pd(p); }
  static __m128 Splat(float x) { return _mm_set1_ps(x); }
  static __m128d Splat(double x) { return _mm_set1_pd(x); }
  static void Store(float* p, __m128 v) { _mm_storeu_ps(p, v); }
  static void Store(double* p, __m128d v) { _mm_storeu_pd(p, v); }
  static int Equal(__m128 a, __m128 b) { return _mm_movemask_ps(_mm_cmpeq_ps(a, b)); }
  static int Equal(__m128d a, __m128d b) { return _mm_movemask_pd(_mm_cmpeq_pd(a, b)); }
};

template <typename T>
int64_t FirstEqual(const T* v, uint32_t i, uint32_t j, T x) {
  constexpr uint32_t kLanes = 16 / sizeof(T);
  const auto target = Sse::Splat(x);
  uint32_t k = i;
  for (; k + kLanes <= j; k += kLanes) {
    const int hits = Sse::Equal(Sse::Load(v + k), target);
    if (hits != 0) return k + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
  for (; k < j; k++)
    if (v[k] == x) return k;
  return -1;
}

template <typename T>
Extremes ScanPresent(const T* v, uint32_t i, uint32_t j) {
  constexpr uint32_t kLanes = 16 / sizeof(T);
  constexpr T kInf = std::numeric_limits<T>::infinity();
  auto lo = Sse::Splat(kInf), hi = Sse::Splat(-kInf);
  uint32_t k = i;
  for (; k + kLanes <= j; k += kLanes) {
    const auto x = Sse::Load(v + k);
    lo = Sse::Min(x, lo);  // x when x < lo; lo when x is NaN
    hi = Sse::Max(x, hi);
  }
  T los[kLanes], his[kLanes];
  Sse::Store(los, lo);
  Sse::Store(his, hi);
  T a = kInf, b = -kInf;
  for (uint32_t q = 0; q < kLanes; q++) {
    if (los[q] < a) a = los[q];
    if (his[q] > b) b = his[q];
  }
  for (; k < j; k++) {
    if (v[k] < a) a = v[k];
    if (v[k] > b) b = v[k];
  }
  // All NaN: neither infinity is there, and no row is equal.
  return {FirstEqual(v, i, j, a), FirstEqual(v, i, j, b)};
}
#endif

template <typename T>
Extremes ScanValues(const void* values, const uint8_t* missing, uint32_t i, uint32_t j) {
  const T* v = static_cast<const T*>(values);
  if (missing) return Scan<T, true>(v, missing, i, j);
#if defined(__SSE2__)
  return ScanPresent(v, i, j);
#else
  return Scan<T, false>(v, nullptr, i, j);
#endif
}

/**
 * The extremes of decimal mantissas, whose order is the values' order (the
 * encoder keeps a mantissa only where it reads back as the value, and
 * FromDecimal is monotonic), without turning them into values first.
 */
Extremes ScanMantissasPlain(const int64_t* n, uint32_t i, uint32_t j) {
  int64_t lo = n[i], hi = n[i];
  Extremes e{i, i};
  for (uint32_t k = i + 1; k < j; k++) {
    const int64_t x = n[k];
    if (x < lo) lo = x, e.min = k;
    if (x > hi) hi = x, e.max = k;
  }
  return e;
}

#if defined(__x86_64__)
// The same in two vector passes (SSE4.2 has the 64-bit comparison SSE2 lacks):
// the smallest and largest mantissas, then the first row holding each.
/** The first row of [i, j) holding x, or -1. */
__attribute__((target("sse4.2"))) int64_t FirstEqual64(const int64_t* n, uint32_t i, uint32_t j, int64_t x) {
  const __m128i target = _mm_set1_epi64x(x);
  uint32_t k = i;
  for (; k + 2 <= j; k += 2) {
    const int hits = _mm_movemask_pd(_mm_castsi128_pd(_mm_cmpeq_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(n + k)), target)));
    if (hits != 0) return k + static_cast<uint32_t>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
  for (; k < j; k++)
    if (n[k] == x) return k;
  return -1;
}

__attribute__((target("sse4.2"))) Extremes ScanMantissasSse42(const int64_t* n, uint32_t i, uint32_t j) {
  // Four pairs of accumulators, so that no step waits on the one before.
  __m128i lo[4], hi[4];
  for (int q = 0; q < 4; q++) lo[q] = hi[q] = _mm_set1_epi64x(n[i]);
  uint32_t k = i;
  for (; k + 8 <= j; k += 8) {
    for (int q = 0; q < 4; q++) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(n + k + 2 * q));
      lo[q] = _mm_blendv_epi8(lo[q], x, _mm_cmpgt_epi64(lo[q], x));
      hi[q] = _mm_blendv_epi8(hi[q], x, _mm_cmpgt_epi64(x, hi[q]));
    }
  }
  int64_t a = n[i], b = n[i];
  for (int q = 0; q < 4; q++) {
    int64_t los[2], his[2];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(los), lo[q]);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(his), hi[q]);
    a = std::min({a, los[0], los[1]});
    b = std::max({b, his[0], his[1]});
  }
  for (; k < j; k++) a = std::min(a, n[k]), b = std::max(b, n[k]);
  return {FirstEqual64(n, i, j, a), FirstEqual64(n, i, j, b)};
}

// MERIDIAN_NATIVE_PORTABLE=1 takes the plain loop anyway (native/check.sh tests it so).
const bool kSse42 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") != 0 && std::getenv("MERIDIAN_NATIVE_PORTABLE") == nullptr;
}();
#endif

Extremes ScanMantissas(const int64_t* n, uint32_t i, uint32_t j) {
#if defined(__x86_64__)
  if (kSse42) return ScanMantissasSse42(n, i, j);
#endif
  return ScanMantissasPlain(n, i, j);
}

// Below this many blocks a second thread costs more than it saves.
constexpr size_t kSplitBlocks = 4;

/**
 * Long-lived helper threads: one runs a chart's batch while JavaScript fetches
 * the next (Chart::Begin), one takes half of a batch (AddAll). Long-lived
 * because a new thread starts with empty thread-local decode scratch
 * (block-view.cc), and filling it again cost more than the split saved. One
 * job at a time each: a chart that finds one busy (another request's chart)
 * does that work on its own thread instead, so nothing ever waits for a
 * helper it did not start.
 */
class Helper {
 public:
  enum Role { kBatch = 0, kHalf = 1 };
  static Helper& Get(Role role) {
    static Helper* helpers = new Helper[2];  // never destroyed: the threads run until the process ends
    return helpers[role];
  }

  Helper() { std::thread([this] { Run(); }).detach(); }

  /** Starts job on the helper; false (nothing started) when it is busy. */
  bool TryStart(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(m_);
    if (busy_) return false;
    busy_ = true;
    job_ = std::move(job);
    cv_.notify_all();
    return true;
  }

  /** Waits for the job TryStart started. */
  void Wait() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return job_ != nullptr; });
      std::function<void()> job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      job();  // catches its own exceptions (AddAll)
      lock.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;
};

}  // namespace

Chart::Chart(int64_t from, int64_t to, uint32_t width) : range_{from, to, width} {
  if (from > to || width < 1 || width > kMaxChartWidth) throw std::invalid_argument("chart: from <= to and 1 <= width <= 10000");
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

void Chart::Start(const BlockHeader& h) {
  started_ = true;
  columns_ = h.columns;
  std::copy(h.kinds, h.kinds + h.columns, kinds_);
  cur_.roles.assign(2 + 2 * static_cast<size_t>(columns_), Role{});
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
  std::sort(out_.begin() + before, out_.end(), [](const ChartRow& a, const ChartRow& b) { return a.t < b.t; });
  // A row chosen for several roles appears once (timestamps are unique in a series).
  out_.erase(std::unique(out_.begin() + before, out_.end(), [](const ChartRow& a, const ChartRow& b) { return a.t == b.t; }), out_.end());
}

void Chart::Scan(ScanBlock& b, uint32_t begin, uint32_t stop) {
  std::vector<Role>& roles = cur_.roles;
  for (uint32_t i = begin; i < stop;) {
    const uint32_t k = range_.BucketOf(b.Time(i));
    const uint32_t j = b.LowerBound(range_.StartOf(k + 1), i, stop);
    if (!open_ || k != cur_.k) {
      Close();
      Open(k);
    }
    if (Replaces(0, roles[0].set, 0, 0)) Take(roles[0], b, i, 0);
    Take(roles[1], b, j - 1, 0);
    for (uint8_t c = 0; c < columns_; c++) {
      if (!Numeric(kinds_[c])) continue;
      const int64_t* mantissas = b.Mantissas(c);
      Extremes e;
      if (mantissas != nullptr && !b.Exceptional(c, i, j)) {
        e = ScanMantissas(mantissas, i, j);
      } else {
        const void* values = b.Values(c);
        e = kinds_[c] == FieldKind::kSingle ? ScanValues<float>(values, b.MissingFlags(c), i, j) : ScanValues<double>(values, b.MissingFlags(c), i, j);
      }
      if (e.min < 0) continue;
      const size_t lo = 2 + 2 * static_cast<size_t>(c), hi = lo + 1;
      const double vmin = b.Value(c, static_cast<uint32_t>(e.min)), vmax = b.Value(c, static_cast<uint32_t>(e.max));
      if (Replaces(lo, roles[lo].set, roles[lo].value, vmin)) Take(roles[lo], b, static_cast<uint32_t>(e.min), vmin);
      if (Replaces(hi, roles[hi].set, roles[hi].value, vmax)) Take(roles[hi], b, static_cast<uint32_t>(e.max), vmax);
    }
    i = j;
  }
}

void Chart::Add(const uint8_t* data, size_t size) {
  thread_local ScanBlock b;  // one per thread: its buffers are reused from block to block
  b.Decode(data, size);
  const BlockHeader& h = b.header();
  if (!started_) {
    Start(h);
  } else if (h.columns != columns_ || !std::equal(h.kinds, h.kinds + h.columns, kinds_)) {
    throw std::invalid_argument("chart: a block with other data fields than the series'");
  }
  const uint32_t begin = b.LowerBound(range_.from, 0, h.rows);
  const uint32_t stop = b.LowerBound(range_.to + 1, begin, h.rows);
  if (stop == begin) return;
  // Buckets close as later ones open: blocks must come in time order.
  const int64_t first = b.Time(begin);
  if (seen_ && first <= lastSeen_) throw std::invalid_argument("chart: blocks out of time order");
  if (!seen_) firstSeen_ = first;
  seen_ = true;
  lastSeen_ = b.Time(stop - 1);
  Scan(b, begin, stop);
}

void Chart::AddAll(const std::vector<std::pair<const uint8_t*, size_t>>& blocks) {
  const size_t n = blocks.size();
  if (n < kSplitBlocks) {
    for (const auto& b : blocks) Add(b.first, b.second);
    return;
  }
  // The later half on a second thread, into a chart of its own, then taken over: the same result as Add one by one.
  const size_t half = n / 2;
  Chart later(range_.from, range_.to, range_.width);
  later.keepHead_ = true;
  std::exception_ptr failed;
  auto rest = [&] {
    try {
      for (size_t i = half; i < n; i++) later.Add(blocks[i].first, blocks[i].second);
    } catch (...) {
      failed = std::current_exception();
    }
  };
  Helper& helper = Helper::Get(Helper::kHalf);
  if (!helper.TryStart(rest)) {
    for (const auto& b : blocks) Add(b.first, b.second);
    return;
  }
  try {
    for (size_t i = 0; i < half; i++) Add(blocks[i].first, blocks[i].second);
  } catch (...) {
    helper.Wait();
    throw;
  }
  helper.Wait();
  if (failed) std::rethrow_exception(failed);
  Absorb(later);
}

void Chart::Begin(std::vector<std::pair<const uint8_t*, size_t>> blocks) {
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
  if (running_) Helper::Get(Helper::kBatch).Wait();  // the job reads this chart and the caller's blocks
}

void Chart::Absorb(Chart& later) {
  if (!later.started_) return;
  if (!started_) {
    columns_ = later.columns_;
    std::copy(later.kinds_, later.kinds_ + later.columns_, kinds_);
    started_ = true;
    cur_.roles.assign(2 + 2 * static_cast<size_t>(columns_), Role{});
  } else if (later.columns_ != columns_ || !std::equal(later.kinds_, later.kinds_ + later.columns_, kinds_)) {
    throw std::invalid_argument("chart: a block with other data fields than the series'");
  }
  if (!later.seen_) return;
  if (seen_ && later.firstSeen_ <= lastSeen_) throw std::invalid_argument("chart: blocks out of time order");
  if (!seen_) firstSeen_ = later.firstSeen_;
  seen_ = true;
  lastSeen_ = later.lastSeen_;
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
  out_.insert(out_.end(), std::make_move_iterator(later.out_.begin()), std::make_move_iterator(later.out_.end()));
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
      uint8_t* to = reinterpret_cast<uint8_t*>(values[c].data());
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
