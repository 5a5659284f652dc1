#include "block-view.h"

#include <algorithm>

namespace meridian {
namespace {

struct Scratch {
  std::vector<double> timestamps;
  std::vector<uint64_t> values;  // 8 bytes a row for any kind
  std::vector<uint8_t> missing;
};

}  // namespace

BlockView::BlockView(const uint8_t* data, size_t size, const BlockHeader& h, void* const* dest)
    : h_(h), cols_(h_.columns) {
  Decode(data, size, dest);
}

BlockView::BlockView(const uint8_t* data, size_t size, void* const* dest)
    : h_(ReadBlockHeader(data, size)), cols_(h_.columns) {
  Decode(data, size, dest);
}

void BlockView::Decode(const uint8_t* data, size_t size, void* const* dest) {
  thread_local Scratch s;
  const uint32_t rows = h_.rows;
  s.timestamps.resize(rows);
  s.values.resize(static_cast<size_t>(rows) * h_.columns);
  s.missing.resize(static_cast<size_t>(rows) * h_.columns);
  for (uint8_t c = 0; c < h_.columns; c++) {
    cols_[c].values = dest != nullptr
                          ? dest[c]
                          : static_cast<void*>(s.values.data() + static_cast<size_t>(c) * rows);
    cols_[c].missing = s.missing.data() + static_cast<size_t>(c) * rows;
  }
  step_ = DecodeBlock(data, size, h_, s.timestamps.data(), cols_.data(), dest == nullptr);
  ts_ = dest != nullptr && step_ != 0 ? nullptr : s.timestamps.data();
}

BlockView::Range BlockView::Select(int64_t from, int64_t to, uint32_t maxRows) const {
  if (ts_ == nullptr) {
    // Evenly spaced: by arithmetic. from and to are compared with the first and last rows (inside
    // D24) before any subtraction, so none overflows whatever a caller passes.
    const int64_t first = h_.first, rows = h_.rows, lastTs = first + step_ * (rows - 1);
    const int64_t begin = from <= first   ? 0
                          : from > lastTs ? rows
                                          : (from - first + step_ - 1) / step_;
    int64_t last = to < first ? 0 : to >= lastTs ? rows : (to - first) / step_ + 1;
    if (last < begin) last = begin;
    const int64_t stop = last - begin > maxRows ? begin + maxRows : last;
    return {static_cast<uint32_t>(begin),
            static_cast<uint32_t>(stop),
            {static_cast<uint32_t>(stop - begin), stop > begin ? first + step_ * (stop - 1) : 0,
             stop < last}};
  }
  const double* end = ts_ + h_.rows;
  uint32_t begin =
      static_cast<uint32_t>(std::lower_bound(ts_, end, static_cast<double>(from)) - ts_);
  uint32_t last = static_cast<uint32_t>(std::upper_bound(ts_, end, static_cast<double>(to)) - ts_);
  if (last < begin) last = begin;
  uint32_t stop = last - begin > maxRows ? begin + maxRows : last;
  return {begin,
          stop,
          {stop - begin, stop > begin ? static_cast<int64_t>(ts_[stop - 1]) : 0, stop < last}};
}

}  // namespace meridian
