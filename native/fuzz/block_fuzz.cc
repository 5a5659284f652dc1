// libFuzzer target over everything a stored block reaches in the addon: the
// header reader and decoder, the JSON row writer, the columns writer, the
// Arrow record batch writer and the Parquet page writer (D64), the encoder on
// what decoded, and the block summary (D65): its reader, a chart's use of it,
// and the summary of every block that decodes; a block's segments (D65): a
// chart by them against one by the block, and segments changed. Run by native/check.sh under
// ASan and UBSan.
//
// The input is a block without its checksum: the target appends the CRC-32C,
// since a fuzzer would almost never guess one and would only ever test the
// checksum. Every output buffer is allocated at its exact size, so a write or
// read one byte past what the code sized is an ASan finding.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../src/arrow-ipc.h"
#include "../src/block-codec.h"
#include "../src/block-segments.h"
#include "../src/block-summary.h"
#include "../src/bytes.h"
#include "../src/chart.h"
#include "../src/crc32c.h"
#include "../src/parquet-pages.h"
#include "../src/value-columns.h"
#include "../src/value-json.h"

using namespace meridian;

namespace {

// Reads take JS safe integers (src/timeseries/blocks/native.ts): the widest range there is.
constexpr int64_t kAll = (int64_t{1} << 53) - 1;

/** Aborts (a libFuzzer finding), naming the property of the readers that does not hold. */
#define Require(ok)                                                              \
  if (!(ok)) {                                                                   \
    std::fprintf(stderr, "block_fuzz.cc:%d: %s does not hold\n", __LINE__, #ok); \
    std::abort();                                                                \
  }

size_t ValueSize(FieldKind kind) {
  return kind == FieldKind::kSingle ? 4 : kind == FieldKind::kDouble ? 8 : 4;
}

struct Decoded {
  BlockHeader h;
  std::vector<double> ts;
  std::vector<std::vector<uint8_t>> values, missing;
  std::vector<ColumnOut> cols;
};

/** The addon's decodeBlock path, into buffers of exactly the header's size; false for a corrupt
 * block. */
bool Decode(const std::vector<uint8_t>& block, Decoded* d) {
  try {
    d->h = ReadBlockHeader(block.data(), block.size());
    const uint32_t rows = d->h.rows;
    d->ts.assign(rows, 0);
    d->values.assign(d->h.columns, {});
    d->missing.assign(d->h.columns, std::vector<uint8_t>(rows));
    d->cols.assign(d->h.columns, ColumnOut{});
    for (uint8_t c = 0; c < d->h.columns; c++) {
      d->values[c].assign(rows * ValueSize(d->h.kinds[c]), 0);
      d->cols[c] = ColumnOut{d->values[c].data(), d->missing[c].data(), false};
    }
    DecodeBlock(block.data(), block.size(), d->h, d->ts.data(), d->cols.data());
    return true;
  } catch (const CorruptBlock&) {
    return false;
  }
}

/** A block that decodes is in order, inside D24 (the writers rely on both). */
void CheckTimestamps(const Decoded& d) {
  for (uint32_t i = 0; i < d.h.rows; i++) {
    Require(d.ts[i] >= kMinTimestamp && d.ts[i] <= kMaxTimestamp);
    Require(i == 0 || d.ts[i] > d.ts[i - 1]);
  }
}

/** Encoding what decoded and decoding that again gives the same timestamps and present values, bit
 * for bit. */
/** What decoded, encoded again: the block our encoder writes for those rows. */
std::vector<uint8_t> Reencode(const Decoded& d) {
  std::vector<ColumnIn> in(d.h.columns);
  for (uint8_t c = 0; c < d.h.columns; c++)
    in[c] = ColumnIn{d.h.kinds[c], d.values[c].data(),
                     d.cols[c].anyMissing ? d.missing[c].data() : nullptr};
  return EncodeBlock(d.ts.data(), d.h.rows, in.data(), d.h.columns);
}

void CheckRoundTrip(const Decoded& d) {
  std::vector<uint8_t> again = Reencode(d);
  Decoded e;
  Require(Decode(again, &e));
  Require(e.h.rows == d.h.rows && e.h.columns == d.h.columns && e.ts == d.ts);
  for (uint8_t c = 0; c < d.h.columns; c++) {
    Require(e.h.kinds[c] == d.h.kinds[c]);
    const size_t size = ValueSize(d.h.kinds[c]);
    for (uint32_t i = 0; i < d.h.rows; i++) {
      // By row: a hostile bitmap may say "some missing" and mark none, which encodes as "none
      // missing".
      const bool missing = d.cols[c].anyMissing && d.missing[c][i];
      Require((e.cols[c].anyMissing && e.missing[c][i]) == missing);
      if (!missing) Require(std::memcmp(&e.values[c][i * size], &d.values[c][i * size], size) == 0);
    }
  }
}

/** Both writers over [from, to], at most maxRows: they refuse exactly what the decoder refuses, and
 * write what they sized. */
void CheckWriters(const std::vector<uint8_t>& block, bool decodes, int64_t from, int64_t to,
                  uint32_t maxRows) {
  TextBuffer json;  // a fresh buffer: its capacity is exactly what WriteBlockJson reserved
  bool jsonRead = true;
  Taken jsonTaken{};
  try {
    jsonTaken = WriteBlockJson(block.data(), block.size(), from, to, maxRows, true, json);
  } catch (const CorruptBlock&) {
    jsonRead = false;
  }
  Require(jsonRead == decodes);
  // Each row is ["yyyy-MM-ddTHH:mm:ss",...]: no NUL byte, as years 0001..9999 have four digits.
  if (jsonRead) Require(json.size() == 0 || std::memchr(json.data(), 0, json.size()) == nullptr);

  try {
    const ColumnsWriter writer(block.data(), block.size(), from, to, maxRows);
    Require(decodes);
    Require(writer.taken().rows == jsonTaken.rows && writer.taken().more == jsonTaken.more);
    std::vector<uint8_t> out(writer.size());
    std::vector<size_t> ends(writer.parts());
    writer.Write(out.data(), ends.data());
    Require(ends.back() == writer.size());
  } catch (const CorruptBlock&) {
    Require(!decodes);
  }

  try {
    const ArrowBatchWriter writer(block.data(), block.size(), from, to, maxRows);
    Require(decodes);
    Require(writer.taken().rows == jsonTaken.rows && writer.taken().more == jsonTaken.more);
    std::vector<uint8_t> out(writer.size());  // exactly: a byte written past it is an ASan finding
    writer.Write(out.data());
    // A message: continuation, metadata length (8-aligned), metadata and body filling the rest.
    uint32_t continuation;
    int32_t metadata;
    std::memcpy(&continuation, out.data(), 4);
    std::memcpy(&metadata, out.data() + 4, 4);
    Require(continuation == 0xffffffff && metadata > 0 && metadata % 8 == 0 &&
            out.size() % 8 == 0 && static_cast<size_t>(metadata) + 8 <= out.size());
  } catch (const CorruptBlock&) {
    Require(!decodes);
  }
}

/**
 * The group writer over the block twice, at most maxRows in all: the bytes of the two per-block
 * messages it equals (maxRows split between them as the walk splits a page), into a buffer of
 * `capacity` bytes: the JS side sizes it from the row count the database stores, which a hostile
 * database may misstate; too small a buffer throws length_error, never a byte written past it.
 */
void CheckArrowGroup(const std::vector<uint8_t>& block, bool decodes, int64_t from, int64_t to,
                     uint32_t maxRows, size_t capacity) {
  std::vector<uint8_t> one;
  Taken first{};
  bool fits = true;
  try {
    const ArrowBatchWriter writer(block.data(), block.size(), from, to, maxRows);
    first = writer.taken();
    one.resize(writer.size());
    writer.Write(one.data());
  } catch (const CorruptBlock&) {
    Require(!decodes);
  }
  std::vector<uint8_t> out(capacity);  // exactly: a byte written past it is an ASan finding
  const std::vector<Payload> two = {{block.data(), block.size()}, {block.data(), block.size()}};
  try {
    const GroupTaken g = WriteArrowBatches(two, from, to, maxRows, out.data(), out.size());
    Require(decodes && g.written <= capacity);
    // The first block's message leads, whatever follows.
    if (first.rows > 0) Require(std::memcmp(out.data(), one.data(), one.size()) == 0);
    Require(g.rows <= maxRows && g.rows <= 2 * uint64_t{first.rows});
  } catch (const CorruptBlock&) {
    Require(!decodes);
  } catch (const std::length_error&) {
    fits = false;
  }
  Require(fits || (decodes && capacity < 2 * one.size()));
}

/** The Parquet page writer refuses exactly what the decoder refuses, takes the rows the JSON
 * writer takes, and writes a page per column; its row group ends with an end per column. Pages
 * are "compressed" by copying (the addon's zstd comes from node, which the fuzzer lacks). */
void CheckParquet(const std::vector<uint8_t>& block, bool decodes, int64_t from, int64_t to,
                  uint32_t maxRows, uint32_t rows) {
  ParquetPages pages([](const uint8_t* src, size_t n, std::vector<uint8_t>& out) {
    out.insert(out.end(), src, src + n);
  });
  std::vector<uint8_t> out;
  std::vector<ParquetPage> list;
  try {
    for (int twice = 0; twice < 2; twice++) {  // two blocks of one row group: the dictionaries grow
      out.clear();
      const Taken taken = pages.Add(block.data(), block.size(), from, to, maxRows, out, list);
      Require(decodes);
      Require(taken.rows == rows);
      Require(list.size() == (taken.rows == 0 ? 0 : 1 + pages.columns()));
      Require(list.empty() || list.back().end == out.size());
    }
    Require(pages.FinishRowGroup().size() == 1 + pages.columns());
  } catch (const CorruptBlock&) {
    Require(!decodes);
  }
}

/** The Arrow schema of a decoded block's columns, named by bytes of the input (any bytes, even
 * NULs), and an empty batch carrying them as metadata. */
void CheckArrowSchema(const Decoded& d, const uint8_t* data, size_t size) {
  std::vector<ArrowField> fields;
  for (uint8_t c = 0; c < d.h.columns; c++)
    fields.push_back({std::string(reinterpret_cast<const char*>(data), std::min<size_t>(size, c)),
                      d.h.kinds[c]});
  const KeyValues metadata = {{"k", std::string(reinterpret_cast<const char*>(data), size)}};
  const std::vector<uint8_t> schema = ArrowSchemaMessage(fields, metadata);
  Require(schema.size() % 8 == 0);
  Require(ArrowEmptyBatch(d.h.columns, metadata).size() % 8 == 0);
}

/** The chart (D50) refuses exactly what the decoder refuses; what it chooses decodes, ascends and
 * lies in the range. */
void CheckChart(const std::vector<uint8_t>& block, bool decodes, int64_t from, int64_t to,
                uint32_t width) {
  Chart chart(from, to, width);
  try {
    chart.Add(block.data(), block.size());
    Require(decodes);
  } catch (const CorruptBlock&) {
    Require(!decodes);
    return;
  }
  for (const std::vector<uint8_t>& out : chart.Finish()) {
    Decoded d;
    Require(Decode(out, &d));
    CheckTimestamps(d);
    Require(d.ts[0] >= static_cast<double>(from) && d.ts[d.h.rows - 1] <= static_cast<double>(to));
  }
}

/** The input read as a summary: refused (CorruptSummary) or read; a chart takes what reads, when it
 * lies inside one bucket, and chooses rows that decode. */
void CheckSummaryBytes(const std::vector<uint8_t>& bytes) {
  BlockSummary s;
  try {
    ReadSummary(bytes.data(), bytes.size(), &s);
  } catch (const CorruptSummary&) {
    return;
  }
  Require(!s.rows.empty() && s.rows.size() <= 2 + 2 * static_cast<size_t>(s.columns));
  Chart chart(kMinTimestamp, kMaxTimestamp, 1);
  chart.AddSummary(bytes.data(), bytes.size());
  for (const std::vector<uint8_t>& out : chart.Finish()) {
    Decoded d;
    Require(Decode(out, &d));
    CheckTimestamps(d);
  }
}

/** A decodable block's summary reads back, and a one-bucket chart by it chooses the rows a chart
 * by the block chooses. */
void CheckSummaryOf(const std::vector<uint8_t>& block) {
  std::vector<uint8_t> summary;
  try {
    summary = Chart::Summarize(block.data(), block.size());
  } catch (const std::invalid_argument&) {
    return;  // a block without rows has no summary
  } catch (const CorruptSummary&) {
    return;  // nor a hostile one whose summary would not read back (it is decoded at read)
  }
  BlockSummary s;
  ReadSummary(summary.data(), summary.size(), &s);  // a finding if it throws
  Chart byBlock(kMinTimestamp, kMaxTimestamp, 1), bySummary(kMinTimestamp, kMaxTimestamp, 1);
  byBlock.Add(block.data(), block.size());
  bySummary.AddSummary(summary.data(), summary.size());
  Require(byBlock.Finish() == bySummary.Finish());
}

/** The chart over two ranges (the block's, and one cut inside it) by a block and by its segments:
 * the rows, or what it threw. */
std::vector<std::vector<std::vector<uint8_t>>> ChartBoth(const std::vector<uint8_t>& block,
                                                         const std::vector<uint8_t>& segments,
                                                         int64_t from, int64_t to, uint32_t width) {
  Chart byBlock(from, to, width), bySegments(from, to, width);
  byBlock.Add(block.data(), block.size());
  bySegments.AddSegmented(block.data(), block.size(), segments.data(), segments.size());
  return {byBlock.Finish(), bySegments.Finish()};
}

/**
 * A decodable block's segments (D65) of `segmentRows`: a chart by them reads
 * the block without a finding, and for the block our encoder writes for the
 * same rows chooses the rows a chart by the block chooses, over the block and
 * over a range cut inside it. (Not for the hostile block itself: mantissas
 * our encoder never writes, two of them for one float, order a scan by
 * mantissas otherwise than the values, and a segment's summary may then keep
 * another of equal values.) The segments with one byte changed, the checksum
 * made right again, are refused or read, never a crash.
 */
void CheckSegments(const std::vector<uint8_t>& block, const Decoded& d, uint32_t segmentRows,
                   uint32_t width, size_t flip) {
  const uint32_t rows = d.h.rows;
  const auto from = static_cast<int64_t>(d.ts[rows / 3]),
             to = static_cast<int64_t>(d.ts[2 * rows / 3]);
  std::vector<uint8_t> segments;
  try {
    segments = Chart::Segment(block.data(), block.size(), segmentRows);
  } catch (const CorruptSummary&) {
    return;  // a hostile block whose segment would not read back has none (decoded whole)
  }
  ChartBoth(block, segments, from, to, width);
  const std::vector<uint8_t> canonical = Reencode(d);
  const std::vector<uint8_t> canonicalSegments =
      Chart::Segment(canonical.data(), canonical.size(), segmentRows);
  for (const auto& range : {std::pair{kMinTimestamp, kMaxTimestamp}, std::pair{from, to}}) {
    const auto both = ChartBoth(canonical, canonicalSegments, range.first, range.second, width);
    Require(both[0] == both[1]);
  }
  std::vector<uint8_t> bad = segments;
  bad[flip % (bad.size() - 4)] ^= static_cast<uint8_t>(1 + flip % 255);
  const uint32_t crc = Crc32c(bad.data(), bad.size() - 4);
  std::memcpy(bad.data() + bad.size() - 4, &crc, 4);
  try {
    Chart chart(from, to, width);
    chart.AddSegmented(block.data(), block.size(), bad.data(), bad.size());
    for (const std::vector<uint8_t>& out : chart.Finish()) {
      Decoded e;
      Require(Decode(out, &e));
      CheckTimestamps(e);
    }
  } catch (const CorruptSummary&) {
  } catch (const CorruptBlock&) {
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> block(data, data + size);
  const uint32_t crc = Crc32c(block.data(), block.size());
  Require(crc == Crc32cPortable(block.data(),
                                block.size()));  // the CPU's instruction and the tables agree
  block.resize(size + 4);
  std::memcpy(block.data() + size, &crc, 4);

  CheckSummaryBytes(block);
  Decoded d;
  const bool decodes = Decode(block, &d);
  CheckWriters(block, decodes, -kAll, kAll, UINT32_MAX);
  CheckArrowGroup(block, decodes, -kAll, kAll, UINT32_MAX, size * 3 % 70001);
  CheckChart(block, decodes, kMinTimestamp, kMaxTimestamp, 1 + size % kMaxChartWidth);
  CheckParquet(block, decodes, -kAll, kAll, UINT32_MAX, decodes ? d.h.rows : 0);
  if (!decodes) return 0;
  CheckTimestamps(d);
  CheckRoundTrip(d);
  CheckArrowSchema(d, data, size);
  CheckSummaryOf(block);
  CheckSegments(block, d, 1 + size % 64, 1 + size % 13, crc);
  // A read from the middle of the block, cut short: the paths that select rows.
  const uint32_t rows = d.h.rows;
  CheckWriters(block, true, static_cast<int64_t>(d.ts[rows / 3]),
               static_cast<int64_t>(d.ts[2 * rows / 3]), rows / 4);
  // The bound the JS side sizes a group's buffer by holds any block's message; a group of two cut
  // blocks fits two bounds.
  const std::vector<FieldKind> kinds(d.h.kinds, d.h.kinds + d.h.columns);
  Require(ArrowBatchWriter(block.data(), block.size(), -kAll, kAll, UINT32_MAX).size() <=
          ArrowBatchBound(rows, kinds));
  CheckArrowGroup(block, true, static_cast<int64_t>(d.ts[rows / 3]),
                  static_cast<int64_t>(d.ts[2 * rows / 3]), rows / 4,
                  2 * ArrowBatchBound(rows, kinds));
  // The range exactly the block's (taken whole, its timestamps never materialised when evenly
  // spaced), and one between rows (found by arithmetic there): the general writer's bytes.
  CheckArrowGroup(block, true, static_cast<int64_t>(d.ts[0]), static_cast<int64_t>(d.ts[rows - 1]),
                  UINT32_MAX, 2 * ArrowBatchBound(rows, kinds));
  CheckArrowGroup(block, true, static_cast<int64_t>(d.ts[rows / 3]) + 1,
                  static_cast<int64_t>(d.ts[2 * rows / 3]) - 1, UINT32_MAX,
                  2 * ArrowBatchBound(rows, kinds));
  CheckChart(block, true, static_cast<int64_t>(d.ts[rows / 3]),
             static_cast<int64_t>(d.ts[2 * rows / 3]), 1 + rows % 7);
  const uint32_t middle = 2 * rows / 3 - rows / 3 + 1;
  CheckParquet(block, true, static_cast<int64_t>(d.ts[rows / 3]),
               static_cast<int64_t>(d.ts[2 * rows / 3]), rows / 4, std::min(middle, rows / 4));
  return 0;
}
