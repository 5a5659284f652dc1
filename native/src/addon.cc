// Entry point of the native addon. The JS wrapper (src/timeseries/blocks/native.ts)
// validates arguments; functions here check only what memory safety needs,
// and turn codec errors into JS exceptions (a corrupt block never crashes).
#include <napi.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "block-codec.h"
#include "chart.h"
#include "crc32c.h"
#include "host-zstd.h"
#include "napi-guard.h"
#include "parquet-pages.h"
#include "value-columns.h"
#include "value-json.h"

namespace meridian {
void RegisterAnswerWriters(Napi::Env env, Napi::Object exports);  // addon-answers.cc
}

namespace {

using meridian::ColumnIn;
using meridian::ColumnOut;
using meridian::FieldKind;

using meridian::Fail;
using meridian::Guarded;

Napi::Value Crc32c(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray())
    return Fail(env, "crc32c: expected a Uint8Array");
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Napi::Number::New(env, meridian::Crc32c(bytes.Data(), bytes.ByteLength()));
}

napi_typedarray_type ArrayTypeOf(FieldKind kind) {
  switch (kind) {
    case FieldKind::kSingle:
      return napi_float32_array;
    case FieldKind::kDouble:
      return napi_float64_array;
    case FieldKind::kFlag:
      return napi_int32_array;
  }
  return napi_int32_array;
}

// encodeBlock(timestamps: Float64Array, kinds: Uint8Array, values: TypedArray[], missing:
// (Uint8Array | null)[]): Uint8Array
Napi::Value EncodeBlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsTypedArray() || !info[1].IsTypedArray() ||
      !info[2].IsArray() || !info[3].IsArray()) {
    return Fail(
        env, "encodeBlock: expected (Float64Array, Uint8Array, TypedArray[], (Uint8Array|null)[])");
  }
  auto ts = info[0].As<Napi::TypedArray>();
  auto kinds = info[1].As<Napi::TypedArray>();
  if (ts.TypedArrayType() != napi_float64_array || kinds.TypedArrayType() != napi_uint8_array)
    return Fail(env, "encodeBlock: bad array types");
  auto values = info[2].As<Napi::Array>();
  auto missing = info[3].As<Napi::Array>();
  size_t rows = ts.ElementLength();
  size_t count = kinds.ElementLength();
  if (count > meridian::kMaxColumns || values.Length() != count || missing.Length() != count)
    return Fail(env, "encodeBlock: one kind, values and missing entry per column");
  if (rows == 0 || rows > meridian::kMaxBlockRows)
    return Fail(env, "encodeBlock: a block holds 1 to 16536 rows");
  const uint8_t* kindBytes = kinds.As<Napi::Uint8Array>().Data();
  std::vector<ColumnIn> cols(count);
  for (uint32_t c = 0; c < count; c++) {
    if (kindBytes[c] > static_cast<uint8_t>(FieldKind::kFlag))
      return Fail(env, "encodeBlock: unknown kind");
    auto kind = static_cast<FieldKind>(kindBytes[c]);
    Napi::Value v = values[c];
    if (!v.IsTypedArray()) return Fail(env, "encodeBlock: values must be typed arrays");
    auto arr = v.As<Napi::TypedArray>();
    if (arr.TypedArrayType() != ArrayTypeOf(kind) || arr.ElementLength() != rows)
      return Fail(env, "encodeBlock: values array of the wrong type or length");
    const uint8_t* miss = nullptr;
    Napi::Value m = missing[c];
    if (!m.IsNull() && !m.IsUndefined()) {
      if (!m.IsTypedArray() || m.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
          m.As<Napi::TypedArray>().ElementLength() != rows) {
        return Fail(env, "encodeBlock: missing must be a Uint8Array of one byte per row");
      }
      miss = m.As<Napi::Uint8Array>().Data();
    }
    cols[c] =
        ColumnIn{kind, static_cast<uint8_t*>(arr.ArrayBuffer().Data()) + arr.ByteOffset(), miss};
  }
  return Guarded(env, [&]() -> Napi::Value {
    std::vector<uint8_t> out =
        meridian::EncodeBlock(ts.As<Napi::Float64Array>().Data(), static_cast<uint32_t>(rows),
                              cols.data(), static_cast<uint8_t>(count));
    return Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size());
  });
}

/** A typed array of `rows` elements, and where its data lies. */
template <typename T>
Napi::TypedArray NewColumn(Napi::Env env, uint32_t rows, void** data) {
  auto array = Napi::TypedArrayOf<T>::New(env, rows);
  *data = array.Data();
  return array;
}

// decodeBlock(bytes: Uint8Array): { timestamps: Float64Array, columns: { kind, values, missing |
// null }[] }
Napi::Value DecodeBlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    return Fail(env, "decodeBlock: expected a Uint8Array");
  }
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Guarded(env, [&]() -> Napi::Value {
    meridian::BlockHeader h = meridian::ReadBlockHeader(bytes.Data(), bytes.ByteLength());
    auto ts = Napi::Float64Array::New(env, h.rows);
    std::vector<ColumnOut> outs(h.columns);
    std::vector<Napi::TypedArray> values(h.columns);
    // Missing flags land in scratch space; only columns that have any get an array.
    thread_local std::vector<uint8_t> missing;
    missing.resize(static_cast<size_t>(h.rows) * h.columns);
    for (uint8_t c = 0; c < h.columns; c++) {
      switch (h.kinds[c]) {
        case FieldKind::kSingle:
          values[c] = NewColumn<float>(env, h.rows, &outs[c].values);
          break;
        case FieldKind::kDouble:
          values[c] = NewColumn<double>(env, h.rows, &outs[c].values);
          break;
        case FieldKind::kFlag:
          values[c] = NewColumn<int32_t>(env, h.rows, &outs[c].values);
          break;
      }
      outs[c].missing = missing.data() + static_cast<size_t>(c) * h.rows;
    }
    meridian::DecodeBlock(bytes.Data(), bytes.ByteLength(), h, ts.Data(), outs.data());
    auto columns = Napi::Array::New(env, h.columns);
    for (uint8_t c = 0; c < h.columns; c++) {
      auto col = Napi::Object::New(env);
      col.Set("kind", Napi::Number::New(env, static_cast<double>(h.kinds[c])));
      col.Set("values", values[c]);
      if (outs[c].anyMissing) {
        auto m = Napi::Uint8Array::New(env, h.rows);
        std::memcpy(m.Data(), outs[c].missing, h.rows);
        col.Set("missing", m);
      } else {
        col.Set("missing", env.Null());
      }
      columns.Set(c, col);
    }
    auto result = Napi::Object::New(env);
    result.Set("timestamps", ts);
    result.Set("columns", columns);
    return result;
  });
}

// The arguments of a range read: (bytes: Uint8Array, from: number, to: number, maxRows: number,
// ...).
struct RangeArgs {
  Napi::Uint8Array bytes;
  int64_t from;
  int64_t to;
  uint32_t maxRows;
};

bool ReadRangeArgs(const Napi::CallbackInfo& info, size_t count, RangeArgs* out) {
  if (info.Length() < count || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !info[1].IsNumber() ||
      !info[2].IsNumber() || !info[3].IsNumber()) {
    return false;
  }
  *out = {info[0].As<Napi::Uint8Array>(), info[1].As<Napi::Number>().Int64Value(),
          info[2].As<Napi::Number>().Int64Value(), info[3].As<Napi::Number>().Uint32Value()};
  return true;
}

/** { [key]: value, rows, last, more } */
Napi::Object TakenResult(Napi::Env env, const meridian::Taken& taken, const char* key,
                         Napi::Value value) {
  auto result = Napi::Object::New(env);
  result.Set(key, value);
  result.Set("rows", Napi::Number::New(env, taken.rows));
  result.Set("last", Napi::Number::New(env, static_cast<double>(taken.last)));
  result.Set("more", Napi::Boolean::New(env, taken.more));
  return result;
}

// blockJson(bytes, from, to, maxRows, first: boolean): { text: Buffer, rows, last, more }
Napi::Value BlockJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RangeArgs a;
  if (!ReadRangeArgs(info, 5, &a) || !info[4].IsBoolean())
    return Fail(env, "blockJson: expected (Uint8Array, number, number, number, boolean)");
  return Guarded(env, [&]() -> Napi::Value {
    thread_local meridian::TextBuffer out;
    out.Clear();
    meridian::Taken taken =
        meridian::WriteBlockJson(a.bytes.Data(), a.bytes.ByteLength(), a.from, a.to, a.maxRows,
                                 info[4].As<Napi::Boolean>().Value(), out);
    return TakenResult(env, taken, "text", Napi::Buffer<char>::Copy(env, out.data(), out.size()));
  });
}

// blockColumns(bytes, from, to, maxRows): { parts: Uint8Array[], rows, last, more }
// The parts are views over one buffer, written in place.
Napi::Value BlockColumns(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RangeArgs a;
  if (!ReadRangeArgs(info, 4, &a))
    return Fail(env, "blockColumns: expected (Uint8Array, number, number, number)");
  return Guarded(env, [&]() -> Napi::Value {
    const meridian::ColumnsWriter writer(a.bytes.Data(), a.bytes.ByteLength(), a.from, a.to,
                                         a.maxRows);
    auto buffer = Napi::Buffer<uint8_t>::New(env, writer.size());
    size_t ends[1 + meridian::kMaxColumns];
    writer.Write(buffer.Data(), ends);
    auto parts = Napi::Array::New(env, writer.parts());
    size_t start = 0;
    for (uint32_t i = 0; i < writer.parts(); start = ends[i++])
      parts.Set(i, Napi::Uint8Array::New(env, ends[i] - start, buffer.ArrayBuffer(),
                                         buffer.ByteOffset() + start));
    return TakenResult(env, writer.taken(), "parts", parts);
  });
}

// new Chart(from, to, width): add(blocks) with the blocks in time order, then finish(): Buffer[]
// (D50, chart.h).
class ChartWrap : public Napi::ObjectWrap<ChartWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "Chart",
        {InstanceMethod<&ChartWrap::Add>("add"), InstanceMethod<&ChartWrap::Finish>("finish")});
  }

  explicit ChartWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChartWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
      Fail(env, "Chart: expected (number, number, number)");
      return;
    }
    Guarded(env, [&]() -> Napi::Value {
      chart_ = std::make_unique<meridian::Chart>(info[0].As<Napi::Number>().Int64Value(),
                                                 info[1].As<Napi::Number>().Int64Value(),
                                                 info[2].As<Napi::Number>().Uint32Value());
      return env.Undefined();
    });
  }

 private:
  // add(blocks: Uint8Array[], summaries?: Uint8Array, order?: Int32Array, segments?:
  // (Uint8Array | undefined)[]): the blocks in time order, read by helper threads while JS goes on
  // (Chart::Begin); a failure of the batch is thrown by the next add or by finish. With `order`
  // (D65), the batch is its pairs in time order: (-1, 0) the next of `blocks`, (offset, length) a
  // block's summary within `summaries`. `segments`, beside `blocks`: a block's segments, if known.
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const char* usage =
        "Chart.add: expected (Uint8Array[], Uint8Array?, Int32Array?, (Uint8Array | undefined)[]?)";
    if (!chart_) return Fail(env, "Chart: finished");
    if (info.Length() < 1 || !info[0].IsArray()) return Fail(env, usage);
    auto array = info[0].As<Napi::Array>();
    std::vector<meridian::ChartItem> blocks(array.Length());
    for (uint32_t i = 0; i < array.Length(); i++) {
      Napi::Value v = array[i];
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        return Fail(env, usage);
      auto bytes = v.As<Napi::Uint8Array>();
      blocks[i] = {bytes.Data(), bytes.ByteLength(), false};
    }
    Napi::Object segments;
    if (info.Length() >= 4 && !info[3].IsUndefined()) {
      if (!info[3].IsArray() || info[3].As<Napi::Array>().Length() != array.Length())
        return Fail(env, usage);
      segments = info[3].As<Napi::Object>();
      for (uint32_t i = 0; i < array.Length(); i++) {
        Napi::Value v = segments.Get(i);
        if (v.IsUndefined()) continue;
        if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
          return Fail(env, usage);
        blocks[i].segments = v.As<Napi::Uint8Array>().Data();
        blocks[i].segmentsSize = v.As<Napi::Uint8Array>().ByteLength();
      }
    }
    Napi::Object summaries;
    if (info.Length() >= 3 && !info[2].IsUndefined()) {
      if (!info[1].IsTypedArray() ||
          info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array ||
          !info[2].IsTypedArray() ||
          info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
        return Fail(env, usage);
      auto packed = info[1].As<Napi::Uint8Array>();
      auto order = info[2].As<Napi::Int32Array>();
      if (order.ElementLength() % 2 != 0) return Fail(env, "Chart.add: order holds pairs");
      std::vector<meridian::ChartItem> items;
      items.reserve(order.ElementLength() / 2);
      size_t next = 0;
      for (size_t i = 0; i < order.ElementLength(); i += 2) {
        const int32_t offset = order[i], length = order[i + 1];
        if (offset == -1 && length == 0) {
          if (next == blocks.size())
            return Fail(env, "Chart.add: order names more blocks than given");
          items.push_back(blocks[next++]);
        } else if (offset >= 0 && length > 0 &&
                   static_cast<size_t>(offset) + static_cast<size_t>(length) <=
                       packed.ByteLength()) {
          items.push_back({packed.Data() + offset, static_cast<size_t>(length), true});
        } else {
          return Fail(env, "Chart.add: a summary outside the summaries given");
        }
      }
      if (next != blocks.size()) return Fail(env, "Chart.add: order names fewer blocks than given");
      blocks = std::move(items);
      summaries = packed;
    }
    return Guarded(env, [&]() -> Napi::Value {
      chart_->Wait();  // the batch before is done: its blocks may go
      held_.Reset();
      heldSummaries_.Reset();
      heldSegments_.Reset();
      // The array keeps these blocks alive while a helper thread reads them (Chart::Begin), until
      // the next add or finish.
      held_ = Napi::Persistent(array.As<Napi::Object>());
      if (!summaries.IsEmpty()) heldSummaries_ = Napi::Persistent(summaries);
      if (!segments.IsEmpty()) heldSegments_ = Napi::Persistent(segments);
      chart_->Begin(std::move(blocks));
      return env.Undefined();
    });
  }

  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!chart_) return Fail(env, "Chart: finished");
    return Guarded(env, [&]() -> Napi::Value {
      std::vector<std::vector<uint8_t>> blocks = chart_->Finish();
      chart_.reset();
      held_.Reset();
      heldSummaries_.Reset();
      heldSegments_.Reset();
      auto out = Napi::Array::New(env, blocks.size());
      for (uint32_t i = 0; i < blocks.size(); i++)
        out.Set(i, Napi::Buffer<uint8_t>::Copy(env, blocks[i].data(), blocks[i].size()));
      return out;
    });
  }

  // Declared first, released last: ~Chart waits for a batch still reading the blocks it holds.
  Napi::ObjectReference held_;
  Napi::ObjectReference heldSummaries_;
  Napi::ObjectReference heldSegments_;
  std::unique_ptr<meridian::Chart> chart_;
};

// new ParquetPages(): add(bytes, from, to, maxRows, out) writes a
// block's rows as Parquet data pages into out, finishRowGroup() ends a row group (parquet-pages.h).
class ParquetPagesWrap : public Napi::ObjectWrap<ParquetPagesWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ParquetPages",
                       {InstanceMethod<&ParquetPagesWrap::Add>("add"),
                        InstanceMethod<&ParquetPagesWrap::Take>("take"),
                        InstanceMethod<&ParquetPagesWrap::FinishRowGroup>("finishRowGroup")});
  }

  explicit ParquetPagesWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<ParquetPagesWrap>(info) {
    // zstd level 1: pages are dense already (dictionary indices, deltas); higher levels cost
    // time for little (bench/values).
    pages_ = std::make_unique<meridian::ParquetPages>(
        [](const uint8_t* src, size_t size, std::vector<uint8_t>& out) {
          meridian::HostZstd(src, size, 1, out);
        });
  }

 private:
  // add(bytes, from, to, maxRows, out: Uint8Array): { written, pages: Uint32Array of (end,
  // uncompressed size, encoding) per page, kinds: Uint8Array, rows, last, more }, the pages
  // written at the start of out: each its header and zstd body, the timestamps' page, then one per
  // block column; no pages when no rows. Or { need } when out is too small: the pages are kept
  // for take(). Into a buffer the caller reuses (D28), not a new one per block: those waited for
  // a full collection and the server's memory grew with the read.
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    RangeArgs a;
    if (!pages_) return Fail(env, "ParquetPages: not constructed");
    if (!ReadRangeArgs(info, 5, &a) || !info[4].IsTypedArray() ||
        info[4].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      return Fail(env,
                  "ParquetPages.add: expected (Uint8Array, number, number, number, Uint8Array)");
    return Guarded(env, [&]() -> Napi::Value {
      out_.clear();
      pending_ = false;
      taken_ =
          pages_->Add(a.bytes.Data(), a.bytes.ByteLength(), a.from, a.to, a.maxRows, out_, list_);
      auto out = info[4].As<Napi::Uint8Array>();
      if (out_.size() > out.ByteLength()) {
        pending_ = true;
        auto result = Napi::Object::New(env);
        result.Set("need", Napi::Number::New(env, static_cast<double>(out_.size())));
        return result;
      }
      return Result(env, out);
    });
  }

  // take(out: Uint8Array): add()'s answer for the pages it kept, written into out.
  Napi::Value Take(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!pages_) return Fail(env, "ParquetPages: not constructed");
    if (info.Length() < 1 || !info[0].IsTypedArray() ||
        info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      return Fail(env, "ParquetPages.take: expected (Uint8Array)");
    auto out = info[0].As<Napi::Uint8Array>();
    if (!pending_ || out_.size() > out.ByteLength())
      return Fail(env, "ParquetPages.take: no pages kept, or out is too small");
    pending_ = false;
    return Result(env, out);
  }

  Napi::Value Result(Napi::Env env, Napi::Uint8Array out) {
    if (!out_.empty()) std::memcpy(out.Data(), out_.data(), out_.size());
    auto meta = Napi::Uint32Array::New(env, list_.size() * 3);
    for (size_t i = 0; i < list_.size(); i++) {
      meta[i * 3] = static_cast<uint32_t>(list_[i].end);
      meta[i * 3 + 1] = static_cast<uint32_t>(list_[i].uncompressed);
      meta[i * 3 + 2] = static_cast<uint32_t>(list_[i].encoding);
    }
    auto result = TakenResult(env, taken_, "written",
                              Napi::Number::New(env, static_cast<double>(out_.size())));
    result.Set("pages", meta);
    auto kinds = Napi::Uint8Array::New(env, list_.empty() ? 0 : pages_->columns());
    for (size_t c = 0; c < kinds.ElementLength(); c++)
      kinds[c] = static_cast<uint8_t>(pages_->kind(c));
    result.Set("kinds", kinds);
    return result;
  }

  // finishRowGroup(): { dictionary: Buffer | null (the page), dictionaryUncompressed, min: Buffer |
  // null, max: Buffer | null, nulls }[]: the timestamps', then each output column's.
  Napi::Value FinishRowGroup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!pages_) return Fail(env, "ParquetPages: not constructed");
    return Guarded(env, [&]() -> Napi::Value {
      std::vector<meridian::ParquetChunkEnd> ends = pages_->FinishRowGroup();
      auto array = Napi::Array::New(env, ends.size());
      auto bytes = [&](const std::vector<uint8_t>& v) -> Napi::Value {
        if (v.empty()) return env.Null();
        return Napi::Buffer<uint8_t>::Copy(env, v.data(), v.size());
      };
      for (uint32_t i = 0; i < ends.size(); i++) {
        auto e = Napi::Object::New(env);
        e.Set("dictionary", bytes(ends[i].dictionary));
        e.Set("dictionaryUncompressed",
              Napi::Number::New(env, static_cast<double>(ends[i].dictionaryUncompressed)));
        e.Set("min", bytes(ends[i].min));
        e.Set("max", bytes(ends[i].max));
        e.Set("nulls", Napi::Number::New(env, static_cast<double>(ends[i].nulls)));
        array.Set(i, e);
      }
      return array;
    });
  }

  std::unique_ptr<meridian::ParquetPages> pages_;
  meridian::Taken taken_{};
  bool pending_ = false;  // add() kept its pages for take()
  std::vector<uint8_t> out_;
  std::vector<meridian::ParquetPage> list_;
};

// summarizeBlock(bytes: Uint8Array): Buffer, the block's summary (D65, block-summary.h).
Napi::Value SummarizeBlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    return Fail(env, "summarizeBlock: expected a Uint8Array");
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Guarded(env, [&]() -> Napi::Value {
    std::vector<uint8_t> out = meridian::Chart::Summarize(bytes.Data(), bytes.ByteLength());
    return Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size());
  });
}

// segmentBlock(bytes: Uint8Array, segmentRows: number): Buffer, the block's segments (D65,
// block-segments.h).
Napi::Value SegmentBlock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !info[1].IsNumber())
    return Fail(env, "segmentBlock: expected (Uint8Array, number)");
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Guarded(env, [&]() -> Napi::Value {
    std::vector<uint8_t> out = meridian::Chart::Segment(bytes.Data(), bytes.ByteLength(),
                                                        info[1].As<Napi::Number>().Uint32Value());
    return Napi::Buffer<uint8_t>::Copy(env, out.data(), out.size());
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Chart", ChartWrap::Define(env));
  exports.Set("ParquetPages", ParquetPagesWrap::Define(env));
  exports.Set("crc32c", Napi::Function::New(env, Crc32c, "crc32c"));
  exports.Set("encodeBlock", Napi::Function::New(env, EncodeBlock, "encodeBlock"));
  exports.Set("decodeBlock", Napi::Function::New(env, DecodeBlock, "decodeBlock"));
  exports.Set("blockJson", Napi::Function::New(env, BlockJson, "blockJson"));
  exports.Set("blockColumns", Napi::Function::New(env, BlockColumns, "blockColumns"));
  meridian::RegisterAnswerWriters(env, exports);

  exports.Set("summarizeBlock", Napi::Function::New(env, SummarizeBlock, "summarizeBlock"));
  exports.Set("segmentBlock", Napi::Function::New(env, SegmentBlock, "segmentBlock"));
  return exports;
}

}  // namespace

NODE_API_MODULE(meridian_native, Init)
