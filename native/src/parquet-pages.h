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

/** A hash set of 64-bit keys giving each its insertion index (open addressing, linear probing). */
class DictionaryIndex {
  struct Entry {
    uint64_t key;
    uint32_t index;  // index + 1, 0 when empty
  };

 public:
  /**
   * The key's index, inserting it; -1 when that would pass `limit` entries.
   * Runs: the last key is checked first (flags repeat; measured values do not).
   */
  template <bool kRuns>
  int64_t Find(uint64_t key, uint32_t limit) {
    if (kRuns && key == lastKey_ && lastIndex_ >= 0) return lastIndex_;
    if (slots_.empty()) Grow();
    const size_t mask = slots_.size() - 1;
    for (size_t h = Slot(key);; h = (h + 1) & mask) {
      const Entry& e = slots_[h];
      if (e.index == 0) return lastIndex_ = Insert(key, h, limit), lastKey_ = key, lastIndex_;
      if (e.key == key) return lastKey_ = key, lastIndex_ = e.index - 1;
    }
  }
  [[nodiscard]] uint32_t size() const { return static_cast<uint32_t>(keys_.size()); }
  [[nodiscard]] const std::vector<uint64_t>& keys() const { return keys_; }
  void Clear();

 private:
  /** Fibonacci hashing: the product's top bits, as many as the table has. */
  [[nodiscard]] size_t Slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  unsigned shift_ = 64;
  int64_t Insert(uint64_t key, size_t slot, uint32_t limit);
  void Grow();
  uint64_t lastKey_ = 0;
  int64_t lastIndex_ = -1;
  std::vector<Entry> slots_;    // key and index side by side: one cache line a probe
  std::vector<uint64_t> keys_;  // in insertion order
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
    DictionaryIndex dictionary;
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
