#include "arrow-ipc.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <stdexcept>

namespace meridian {
namespace {

// Format/Schema.fbs and Message.fbs numbers.
constexpr int16_t kMetadataV5 = 4;
constexpr uint8_t kHeaderSchema = 1;
constexpr uint8_t kHeaderRecordBatch = 3;
constexpr uint8_t kTypeInt = 2;
constexpr uint8_t kTypeFloatingPoint = 3;
constexpr uint8_t kTypeTimestamp = 10;
constexpr int16_t kPrecisionSingle = 1;
constexpr int16_t kPrecisionDouble = 2;
constexpr int16_t kMillisecond = 1;

inline size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

/**
 * A flatbuffer written front to back: a table is written before what its
 * offset fields point to, and those offsets are set once the target is
 * written (flatbuffer offsets point forward, so this order needs no
 * reversal). Scalars sit at positions aligned to their size, counted from the
 * buffer's start, which the stream keeps 8-aligned.
 */
class Flat {
 public:
  struct Field {
    uint16_t id;
    uint8_t size;  // 1, 2, 4 or 8; an offset field is 4 with value 0, set later by Point
    uint64_t value;
  };
  struct Table {
    size_t at;
    size_t fields[8];  // absolute position of each field, in the order given
  };

  Flat() { Add<uint32_t>(0); }  // the root offset, set by Root

  template <typename T>
  size_t Add(T v) {
    const size_t p = b_.size();
    b_.resize(p + sizeof v);
    std::memcpy(b_.data() + p, &v, sizeof v);
    return p;
  }
  void Align(size_t a) { b_.resize((b_.size() + a - 1) / a * a, 0); }
  /** Sets the offset field at `slot` to point at `target`, written after it. */
  void Point(size_t slot, size_t target) {
    const auto v = static_cast<uint32_t>(target - slot);
    std::memcpy(b_.data() + slot, &v, 4);
  }
  void Root(size_t table) { Point(0, table); }

  /** A table: its vtable, then its fields, largest first (so none needs padding but the first).
   */
  Table Add(std::initializer_list<Field> fields) {
    uint16_t ids = 0;
    uint8_t align = 4;
    for (const Field& f : fields) {
      ids = std::max<uint16_t>(ids, f.id + 1);
      align = std::max(align, f.size);
    }
    std::vector<const Field*> order;
    for (const Field& f : fields) order.push_back(&f);
    std::stable_sort(order.begin(), order.end(),
                     [](const Field* a, const Field* b) { return a->size > b->size; });
    uint16_t offsets[16] = {};
    uint16_t inline_size = 4;  // the vtable offset
    for (const Field* f : order) {
      inline_size = static_cast<uint16_t>((inline_size + f->size - 1) / f->size * f->size);
      offsets[f->id] = inline_size;
      inline_size = static_cast<uint16_t>(inline_size + f->size);
    }
    Align(2);
    const size_t vtable = b_.size();
    Add<uint16_t>(static_cast<uint16_t>(4 + 2 * ids));
    Add<uint16_t>(inline_size);
    for (uint16_t i = 0; i < ids; i++) Add<uint16_t>(offsets[i]);
    Align(align);
    Table t{b_.size(), {}};
    b_.resize(t.at + inline_size, 0);
    const auto back = static_cast<int32_t>(t.at - vtable);
    std::memcpy(b_.data() + t.at, &back, 4);
    size_t k = 0;
    for (const Field& f : fields) {
      t.fields[k] = t.at + offsets[f.id];
      std::memcpy(b_.data() + t.fields[k++], &f.value, f.size);  // little endian: the low bytes
    }
    return t;
  }

  size_t String(const std::string& s) {
    Align(4);
    const size_t at = Add<uint32_t>(static_cast<uint32_t>(s.size()));
    b_.insert(b_.end(), s.begin(), s.end());
    b_.push_back(0);
    return at;
  }

  /** A vector of `count` offsets, each to be set by Point(at + 4 + 4 * i, ...). */
  size_t Offsets(size_t count) {
    Align(4);
    const size_t at = Add<uint32_t>(static_cast<uint32_t>(count));
    b_.resize(b_.size() + 4 * count, 0);
    return at;
  }

  /** A vector of 16-byte structs of two int64 (FieldNode, Buffer), 8-aligned. */
  size_t Pairs(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
    Align(4);
    if ((b_.size() + 4) % 8 != 0) Add<uint32_t>(0);
    const size_t at = Add<uint32_t>(static_cast<uint32_t>(pairs.size()));
    for (const auto& [a, b] : pairs) {
      Add<int64_t>(a);
      Add<int64_t>(b);
    }
    return at;
  }

  /** KeyValue tables for custom_metadata, pointed to from `slot`. */
  void Metadata(size_t slot, const KeyValues& kv) {
    const size_t vec = Offsets(kv.size());
    Point(slot, vec);
    for (size_t i = 0; i < kv.size(); i++) {
      const Table t = Add({{0, 4, 0}, {1, 4, 0}});
      Point(vec + 4 + 4 * i, t.at);
      Point(t.fields[0], String(kv[i].first));
      Point(t.fields[1], String(kv[i].second));
    }
  }

  /** The metadata, padded to a multiple of 8. */
  std::vector<uint8_t> Finish() {
    Align(8);
    return std::move(b_);
  }

 private:
  std::vector<uint8_t> b_;
};

/** Continuation marker and metadata length, then the metadata; the body follows. */
uint8_t* PutPrefix(const std::vector<uint8_t>& metadata, uint8_t* out) {
  const uint32_t continuation = 0xffffffff;
  const auto length = static_cast<int32_t>(metadata.size());
  std::memcpy(out, &continuation, 4);
  std::memcpy(out + 4, &length, 4);
  std::memcpy(out + 8, metadata.data(), metadata.size());
  return out + 8 + metadata.size();
}

std::vector<uint8_t> Framed(const std::vector<uint8_t>& metadata) {
  std::vector<uint8_t> out(8 + metadata.size());
  PutPrefix(metadata, out.data());
  return out;
}

/** A RecordBatch message's metadata: `columns` data fields after the timestamp. */
std::vector<uint8_t> BatchMetadata(int64_t rows,
                                   const std::vector<std::pair<int64_t, int64_t>>& nodes,
                                   const std::vector<std::pair<int64_t, int64_t>>& buffers,
                                   size_t body, const KeyValues* metadata) {
  Flat f;
  const Flat::Table m = metadata ? f.Add({{0, 2, static_cast<uint16_t>(kMetadataV5)},
                                          {1, 1, kHeaderRecordBatch},
                                          {2, 4, 0},
                                          {3, 8, body},
                                          {4, 4, 0}})
                                 : f.Add({{0, 2, static_cast<uint16_t>(kMetadataV5)},
                                          {1, 1, kHeaderRecordBatch},
                                          {2, 4, 0},
                                          {3, 8, body}});
  f.Root(m.at);
  const Flat::Table rb = f.Add({{0, 8, static_cast<uint64_t>(rows)}, {1, 4, 0}, {2, 4, 0}});
  f.Point(m.fields[2], rb.at);
  f.Point(rb.fields[1], f.Pairs(nodes));
  f.Point(rb.fields[2], f.Pairs(buffers));
  if (metadata) f.Metadata(m.fields[4], *metadata);
  return f.Finish();
}

size_t ValueWidth(FieldKind kind) { return kind == FieldKind::kDouble ? 8 : 4; }

/** Whether a value is not finite, by its exponent bits (a loop of these vectorises). */
inline bool NotFinite(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return (bits & 0x7f800000u) == 0x7f800000u;
}
inline bool NotFinite(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
}
inline bool NotFinite(int32_t) { return false; }

/**
 * Calls f(i, null) for rows [begin, stop) of column c, null when the value is missing or not
 * finite (JSON's null, D25); returns the nulls. One loop per kind, without a branch per row.
 */
template <typename T, typename F>
uint32_t EachNull(const BlockView& b, uint8_t c, uint32_t begin, uint32_t stop, F f) {
  const T* values = static_cast<const T*>(b.column(c).values);
  const uint8_t* missing = b.column(c).anyMissing ? b.column(c).missing : nullptr;
  uint32_t nulls = 0;
  for (uint32_t i = begin; i < stop; i++) {
    const bool null = (missing != nullptr && missing[i] != 0) | NotFinite(values[i]);
    nulls += null;
    f(i, null);
  }
  return nulls;
}

template <typename F>
uint32_t EachNull(const BlockView& b, uint8_t c, uint32_t begin, uint32_t stop, F f) {
  switch (b.header().kinds[c]) {
    case FieldKind::kSingle:
      return EachNull<float>(b, c, begin, stop, f);
    case FieldKind::kDouble:
      return EachNull<double>(b, c, begin, stop, f);
    case FieldKind::kFlag:
      if (!b.column(c).anyMissing) return 0;  // flags are always finite
      return EachNull<int32_t>(b, c, begin, stop, f);
  }
  return 0;
}

}  // namespace

std::vector<uint8_t> ArrowSchemaMessage(const std::vector<ArrowField>& fields,
                                        const KeyValues& metadata) {
  Flat f;
  const Flat::Table m = f.Add(
      {{0, 2, static_cast<uint16_t>(kMetadataV5)}, {1, 1, kHeaderSchema}, {2, 4, 0}, {3, 8, 0}});
  f.Root(m.at);
  const Flat::Table schema = f.Add({{0, 2, 0}, {1, 4, 0}, {2, 4, 0}});  // little endian
  f.Point(m.fields[2], schema.at);
  const size_t list = f.Offsets(1 + fields.size());
  f.Point(schema.fields[1], list);
  for (size_t i = 0; i <= fields.size(); i++) {
    const bool timestamp = i == 0;
    const FieldKind kind = timestamp ? FieldKind::kDouble : fields[i - 1].kind;
    const uint8_t type = timestamp                  ? kTypeTimestamp
                         : kind == FieldKind::kFlag ? kTypeInt
                                                    : kTypeFloatingPoint;
    const Flat::Table field = f.Add({{0, 4, 0},
                                     {1, 1, timestamp ? 0u : 1u},
                                     {2, 1, type},
                                     {3, 4, 0},
                                     {5, 4, 0}});  // name, nullable, type, children
    f.Point(list + 4 + 4 * i, field.at);
    f.Point(field.fields[0], f.String(timestamp ? "timestamp" : fields[i - 1].name));
    if (timestamp) {
      const Flat::Table t = f.Add({{0, 2, static_cast<uint16_t>(kMillisecond)}, {1, 4, 0}});
      f.Point(field.fields[3], t.at);
      f.Point(t.fields[1], f.String("UTC"));
    } else if (kind == FieldKind::kFlag) {
      f.Point(field.fields[3], f.Add({{0, 4, 32}, {1, 1, 1}}).at);  // int32, signed
    } else {
      const int16_t precision = kind == FieldKind::kSingle ? kPrecisionSingle : kPrecisionDouble;
      f.Point(field.fields[3], f.Add({{0, 2, static_cast<uint16_t>(precision)}}).at);
    }
    f.Point(field.fields[4], f.Offsets(0));  // no children (readers require the vector)
  }
  f.Metadata(schema.fields[2], metadata);
  return Framed(f.Finish());
}

std::vector<uint8_t> ArrowEmptyBatch(uint8_t columns, const KeyValues& metadata) {
  const std::vector<std::pair<int64_t, int64_t>> nodes(1 + columns, {0, 0});
  const std::vector<std::pair<int64_t, int64_t>> buffers(size_t{2} * (1 + columns), {0, 0});
  return Framed(BatchMetadata(0, nodes, buffers, 0, &metadata));
}

namespace {

/** A record batch's nodes and buffers: `rows` rows, the timestamp then the columns, with the
 * given nulls per column (a column with nulls has a validity bitmap); its body's size. */
struct BatchLayout {
  std::vector<std::pair<int64_t, int64_t>> nodes, buffers;
  size_t body = 0;

  BatchLayout(uint32_t rows, const FieldKind* kinds, uint8_t columns, const uint32_t* nulls)
      : nodes(1 + columns), buffers(size_t{2} * (1 + columns)) {
    const size_t bitmap = (rows + 7) / 8;
    for (uint32_t c = 0; c <= columns; c++) {
      nodes[c] = {rows, nulls[c]};
      const size_t validity = nulls[c] > 0 ? bitmap : 0;
      buffers[size_t{2} * c] = {static_cast<int64_t>(body), static_cast<int64_t>(validity)};
      body += Pad8(validity);
      const size_t values = size_t{rows} * (c == 0 ? 8 : ValueWidth(kinds[c - 1]));
      buffers[size_t{2} * c + 1] = {static_cast<int64_t>(body), static_cast<int64_t>(values)};
      body += Pad8(values);
    }
  }
};

/** Timestamps [begin, stop) as int64 milliseconds at p (exact: D24's range times 1000 fits); evenly
 * spaced ones as a running sum of integers, which vectorises where converting doubles does not. */
void PutMilliseconds(const BlockView& block, uint32_t begin, uint32_t stop, uint8_t* p) {
  if (block.step() != 0) {
    const int64_t step = block.step() * 1000;
    int64_t v = (block.header().first + block.step() * int64_t{begin}) * 1000;
    for (uint32_t i = 0; i < stop - begin; i++, v += step) std::memcpy(p + size_t{i} * 8, &v, 8);
    return;
  }
  const double* ts = block.timestamps();
  for (uint32_t i = begin; i < stop; i++) {
    const int64_t v = static_cast<int64_t>(ts[i]) * 1000;
    std::memcpy(p + size_t{i - begin} * 8, &v, 8);
  }
}

enum class Whole { kWritten, kCut, kNulls };

/**
 * A whole block without nulls, its values decoded straight into their place in out (no copy
 * through scratch space), its message's size in *size. A block cut by the range or by maxRows, or
 * holding a null, is left to the general writer (which decodes it again). The bytes are the
 * general writer's. Throws CorruptBlock.
 */
Whole WriteWholeBatch(const Payload& b, int64_t from, int64_t to, uint64_t maxRows, uint8_t* out,
                      size_t capacity, Taken* taken, size_t* written) {
  const BlockHeader h = ReadBlockHeader(b.data, b.size);
  // Cut before decoding where the header tells: more rows than asked, or a range starting after the
  // first row (a read's first block, a page's); a range ending inside is found once decoded.
  if (h.rows > maxRows || from > h.first) return Whole::kCut;
  const std::vector<uint32_t> none(1 + h.columns, 0);
  const BatchLayout layout(h.rows, h.kinds, h.columns, none.data());
  const std::vector<uint8_t> metadata =
      BatchMetadata(h.rows, layout.nodes, layout.buffers, layout.body, nullptr);
  const size_t size = 8 + metadata.size() + layout.body;
  // Too small: the general writer says so, after it has found whether the block decodes at all.
  if (size > capacity) return Whole::kCut;
  uint8_t* body = out + 8 + metadata.size();
  std::vector<void*> dest(h.columns);
  for (uint8_t c = 0; c < h.columns; c++)
    dest[c] = body + layout.buffers[size_t{2} * (c + 1) + 1].first;
  const BlockView block(b.data, b.size, h, dest.data());
  const BlockView::Range range = block.Select(from, to, static_cast<uint32_t>(h.rows));
  if (range.begin != 0 || range.stop != h.rows) return Whole::kCut;
  for (uint8_t c = 0; c < h.columns; c++)
    if (EachNull(block, c, 0, h.rows, [](uint32_t, bool) {}) > 0) return Whole::kNulls;
  PutPrefix(metadata, out);
  PutMilliseconds(block, 0, h.rows, body);
  for (uint8_t c = 0; c <= h.columns;
       c++) {  // zeros after each buffer up to the next multiple of 8
    const auto& [at, length] = layout.buffers[size_t{2} * c + 1];
    std::memset(body + at + length, 0, Pad8(length) - length);
  }
  *taken = range.taken;
  *written = size;
  return Whole::kWritten;
}

}  // namespace

ArrowBatchWriter::ArrowBatchWriter(const uint8_t* data, size_t size, int64_t from, int64_t to,
                                   uint32_t maxRows)
    : block_(data, size), range_(block_.Select(from, to, maxRows)) {
  const BlockHeader& h = block_.header();
  const uint32_t begin = range_.begin, stop = range_.stop, rows = stop - begin;
  nulls_.assign(1 + h.columns, 0);
  for (uint8_t c = 0; c < h.columns; c++)
    nulls_[1 + c] = EachNull(block_, c, begin, stop, [](uint32_t, bool) {});
  const BatchLayout layout(rows, h.kinds, h.columns, nulls_.data());
  body_ = layout.body;
  metadata_ = BatchMetadata(rows, layout.nodes, layout.buffers, body_, nullptr);
}

void ArrowBatchWriter::Write(uint8_t* out) const {
  const BlockHeader& h = block_.header();
  const uint32_t begin = range_.begin, stop = range_.stop, rows = stop - begin;
  uint8_t* p = PutPrefix(metadata_, out);
  const size_t bitmap = (rows + 7) / 8;
  auto pad = [&p](size_t n) {  // zeros after a buffer up to the next multiple of 8
    std::memset(p, 0, Pad8(n) - n);
    p += Pad8(n) - n;
  };
  PutMilliseconds(block_, begin, stop, p);
  p += size_t{rows} * 8;
  for (uint8_t c = 0; c < h.columns; c++) {
    if (nulls_[1 + c] > 0) {
      std::memset(p, 0, Pad8(bitmap));
      EachNull(block_, c, begin, stop, [p, begin](uint32_t i, bool null) {
        p[(i - begin) >> 3] |= static_cast<uint8_t>(!null) << ((i - begin) & 7);
      });
      p += Pad8(bitmap);
    }
    const size_t width = ValueWidth(h.kinds[c]);
    const size_t bytes = size_t{rows} * width;
    std::memcpy(p, static_cast<const uint8_t*>(block_.column(c).values) + size_t{begin} * width,
                bytes);
    p += bytes;
    pad(bytes);
  }
}

GroupTaken WriteArrowBatches(const std::vector<Payload>& blocks, int64_t from, int64_t to,
                             uint64_t maxRows, uint8_t* out, size_t capacity) {
  GroupTaken g{0, 0, 0, false};
  bool direct = true;  // until a block holds nulls (the blocks of a series are alike)
  for (const Payload& b : blocks) {
    const uint64_t left = maxRows - g.rows;
    if (direct) {
      Taken whole{};
      size_t written = 0;
      const Whole w = WriteWholeBatch(b, from, to, left, out + g.written, capacity - g.written,
                                      &whole, &written);
      if (w == Whole::kWritten) {
        g.written += written;
        g.rows += whole.rows;
        g.last = whole.last;
        g.more = whole.more;
        if (g.rows == maxRows) break;
        continue;
      }
      direct = w != Whole::kNulls;
    }
    const ArrowBatchWriter writer(
        b.data, b.size, from, to,
        static_cast<uint32_t>(std::min<uint64_t>(left, std::numeric_limits<uint32_t>::max())));
    const Taken& taken = writer.taken();
    if (taken.rows > 0) {
      if (writer.size() > capacity - g.written)
        throw std::length_error("arrow batches: the buffer is smaller than their bound");
      writer.Write(out + g.written);
      g.written += writer.size();
      g.rows += taken.rows;
      g.last = taken.last;
    }
    g.more = taken.more;
    if (g.rows == maxRows) break;
  }
  return g;
}

size_t ArrowBatchBound(uint32_t rows, const std::vector<FieldKind>& kinds) {
  // The metadata's size depends only on the number of columns (every field is written, none
  // defaulted away).
  const std::vector<std::pair<int64_t, int64_t>> nodes(1 + kinds.size());
  const std::vector<std::pair<int64_t, int64_t>> buffers(2 * (1 + kinds.size()));
  size_t bytes =
      8 + BatchMetadata(rows, nodes, buffers, 0, nullptr).size() + Pad8(size_t{rows} * 8);
  for (const FieldKind kind : kinds)
    bytes += Pad8((rows + 7) / 8) + Pad8(size_t{rows} * ValueWidth(kind));
  return bytes;
}

}  // namespace meridian
