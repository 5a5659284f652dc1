// The column data of a Parquet file (D64), written straight from encoded
// blocks: per block, one uncompressed data page (v1) per column, the
// timestamps as milliseconds in DELTA_BINARY_PACKED, each data field's
// definition levels (RLE; missing values, NaN and infinities as nulls, as
// in JSON and the Arrow answer) and values, dictionary
// indices while the row group's dictionary stays small, PLAIN after it. A
// row group ends with each column's dictionary and statistics. A row group
// holds one series (its blocks' columns are its columns); the caller maps
// them to the file's columns. Page headers,
// Each page is compressed by the compressor it is given (the addon's: zstd,
// host-zstd.h) and written behind its header (Thrift compact protocol). The
// footer is the caller's (src/timeseries/columnar/parquet-*.ts): this class
// holds a row group's dictionaries and statistics, never its pages.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "block-view.h"

namespace meridian {

/** Parquet's encodings, those written here. */
enum class ParquetEncoding : uint8_t {
  kPlain = 0,
  kRle = 3,
  kDeltaBinaryPacked = 5,
  kRleDictionary = 8
};

/** One column's page as ParquetPages::Add writes it: header, then compressed body. */
struct ParquetPage {
  /** Where its bytes end in the output. */
  size_t end;
  /** Its size uncompressed (header and body), for the column chunk's metadata. */
  size_t uncompressed;
  ParquetEncoding encoding;
};

/** Appends the compressed form of [src, src + size) to out. */
using ParquetCompress = void (*)(const uint8_t* src, size_t size, std::vector<uint8_t>& out);

/** A column's dictionary page and statistics for the row group just ended. */
struct ParquetChunkEnd {
  /** The dictionary page (header, compressed PLAIN values); empty when none. */
  std::vector<uint8_t> dictionary;
  size_t dictionaryUncompressed = 0;
  /** Plain-encoded min and max of the non-null values that are not NaN; empty when there is none.
   */
  std::vector<uint8_t> min, max;
  uint64_t nulls = 0;
};

/**
 * A hash set of keys (a value's bits: 32 for Single and Flag, 64 for Double) giving each its
 * insertion index (open addressing, linear probing). Keys of 32 bits are held in 8-byte slots: the
 * table of a W1 row group (a few thousand values) then stays in the L2 cache, which is what a
 * lookup per value costs (issue 30: the lookups were half of a Parquet read's time).
 */
template <typename Key>
class DictionaryIndex {
  struct Entry {
    Key key;
    uint32_t index;  // index + 1, 0 when empty
  };

 public:
  /**
   * The key's index, inserting it; -1 when that would pass `limit` entries.
   * Runs: the last key is checked first (flags repeat; measured values do not).
   */
  template <bool kRuns>
  int64_t Find(Key key, uint32_t limit) {
    if (kRuns && key == lastKey_ && lastIndex_ >= 0) return lastIndex_;
    const size_t mask = slots_.size() - 1;
    for (size_t h = Slot(key);; h = (h + 1) & mask) {
      const Entry& e = slots_[h];
      if (e.key == key && e.index != 0) {
        if (kRuns) lastKey_ = key, lastIndex_ = e.index - 1;
        return e.index - 1;
      }
      if (e.index == 0) {
        const int64_t ix = Insert(key, h, limit);
        if (kRuns) lastKey_ = key, lastIndex_ = ix;
        return ix;
      }
    }
  }
  /** Makes room for a first key (Find's table is never empty). */
  void Reserve() {
    if (slots_.empty()) Grow();
  }
  [[nodiscard]] uint32_t size() const { return static_cast<uint32_t>(keys_.size()); }
  [[nodiscard]] const std::vector<Key>& keys() const { return keys_; }
  void Clear() {
    std::fill(slots_.begin(), slots_.end(), Entry{0, 0});
    keys_.clear();
    lastIndex_ = -1;
  }

 private:
  /** Fibonacci hashing: the product's top bits, as many as the table has. */
  [[nodiscard]] size_t Slot(Key key) const {
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  int64_t Insert(Key key, size_t slot, uint32_t limit) {
    if (keys_.size() >= limit) return -1;
    keys_.push_back(key);
    slots_[slot] = {key, static_cast<uint32_t>(keys_.size())};
    // At most a quarter full: few probes go past their first slot.
    if (keys_.size() * 4 > slots_.size()) Grow();
    return static_cast<int64_t>(keys_.size() - 1);
  }
  void Grow() {
    const size_t size = std::max<size_t>(1024, slots_.size() * 2);
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(size));
    slots_.assign(size, Entry{0, 0});
    const size_t mask = size - 1;
    for (size_t k = 0; k < keys_.size(); k++) {
      size_t h = Slot(keys_[k]);
      while (slots_[h].index != 0) h = (h + 1) & mask;
      slots_[h] = {keys_[k], static_cast<uint32_t>(k + 1)};
    }
  }
  unsigned shift_ = 64;
  Key lastKey_ = 0;
  int64_t lastIndex_ = -1;
  std::vector<Entry> slots_;  // key and index side by side: one cache line a probe
  std::vector<Key> keys_;     // in insertion order
};

class ParquetPages {
 public:
  explicit ParquetPages(ParquetCompress compress) : compress_(compress) {}

  /**
   * Appends to out the pages of the block's rows in [from, to], at most
   * maxRows: the timestamps', then one per block column; pages gets one
   * entry each (none when no rows are taken). Throws CorruptBlock for a bad
   * block, also for one whose columns differ from the row group's first.
   */
  Taken Add(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows,
            std::vector<uint8_t>& out, std::vector<ParquetPage>& pages);

  /** The open row group's columns, by kind (those of its first block). */
  [[nodiscard]] size_t columns() const { return columns_.size(); }
  [[nodiscard]] FieldKind kind(size_t c) const { return columns_[c].kind; }

  /** Ends the row group: the timestamps' end, then each column's; the next Add starts a new one. */
  std::vector<ParquetChunkEnd> FinishRowGroup();

  /** Most dictionary entries a column's row group may hold before it writes PLAIN. */
  static constexpr uint32_t kDictionaryLimit = 1 << 16;

 private:
  struct Column {
    FieldKind kind;
    DictionaryIndex<uint32_t> narrow;  // Single and Flag: a value's bits
    DictionaryIndex<uint64_t> wide;    // Double
    [[nodiscard]] uint32_t entries() const { return narrow.size() + wide.size(); }
    bool plain = false;  // the dictionary is full: PLAIN for the rest of the row group
    bool any =
        false;  // min and max hold a value (of PLAIN pages; the dictionary's are added at the end)
    double min = 0, max = 0;  // flag ids too: an int32 is exact as a double
    uint64_t nulls = 0;
  };
  void Include(Column& col, const void* values, uint32_t begin, uint32_t rows, bool anyMissing);
  /** Appends the page header and the compressed body_ to out, and its entry to pages. */
  void Emit(std::vector<uint8_t>& out, std::vector<ParquetPage>& pages, uint32_t rows,
            ParquetEncoding encoding);
  ParquetCompress compress_;
  std::vector<uint8_t> body_, packed_;
  std::vector<Column> columns_;
  bool open_ = false;  // a row group has columns_
  bool anyTime_ = false;
  int64_t tmin_ = 0, tmax_ = 0;
  std::vector<uint64_t> scratch_;
  std::vector<uint32_t> indexes_;
  std::vector<uint8_t> present_;
};

}  // namespace meridian
