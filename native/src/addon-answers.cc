// Node-API functions of the REST answers written into a caller's buffer
// (D28: a pooled one, reused, rather than a fresh one per block) and of the
// Arrow IPC stream (D64). Checks here are only what memory safety needs; the
// JS wrapper (src/timeseries/blocks/native.ts) validates arguments.
//
// A writer into `out` answers { written, rows, last, more } when the rows fit,
// or { need } (nothing written) when `out` is smaller than they may take: the
// caller takes a buffer of `need` bytes and asks again.
#include <napi.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrow-ipc.h"
#include "block-codec.h"
#include "napi-guard.h"
#include "value-json.h"

namespace meridian {
namespace {

bool IsBytes(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
}

/** (bytes, from, to, maxRows, ..., out) with out at index `outAt`. */
bool RangeArgs(const Napi::CallbackInfo& info, size_t outAt) {
  return info.Length() > outAt && IsBytes(info[0]) && info[1].IsNumber() && info[2].IsNumber() &&
         info[3].IsNumber() && IsBytes(info[outAt]);
}

template <typename Writer>
Napi::Value Into(Napi::Env env, const Writer& writer, size_t need, Napi::Uint8Array out,
                 size_t (*write)(const Writer&, uint8_t*)) {
  auto result = Napi::Object::New(env);
  if (out.ByteLength() < need) {
    result.Set("need", Napi::Number::New(env, static_cast<double>(need)));
    return result;
  }
  const size_t written = need == 0 ? 0 : write(writer, out.Data());
  const Taken& taken = writer.taken();
  result.Set("written", Napi::Number::New(env, static_cast<double>(written)));
  result.Set("rows", Napi::Number::New(env, taken.rows));
  result.Set("last", Napi::Number::New(env, static_cast<double>(taken.last)));
  result.Set("more", Napi::Boolean::New(env, taken.more));
  return result;
}

// blockJsonInto(bytes, from, to, maxRows, first: boolean, out: Uint8Array)
Napi::Value BlockJsonInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!RangeArgs(info, 5) || !info[4].IsBoolean())
    return Fail(
        env, "blockJsonInto: expected (Uint8Array, number, number, number, boolean, Uint8Array)");
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Guarded(env, [&]() -> Napi::Value {
    const JsonRowsWriter writer(
        bytes.Data(), bytes.ByteLength(), info[1].As<Napi::Number>().Int64Value(),
        info[2].As<Napi::Number>().Int64Value(), info[3].As<Napi::Number>().Uint32Value(),
        info[4].As<Napi::Boolean>().Value());
    return Into<JsonRowsWriter>(env, writer, writer.bound(), info[5].As<Napi::Uint8Array>(),
                                [](const JsonRowsWriter& w, uint8_t* out) {
                                  return w.Write(reinterpret_cast<char*>(out));
                                });
  });
}

// arrowBatchInto(bytes, from, to, maxRows, out: Uint8Array): one record batch message
Napi::Value ArrowBatchInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!RangeArgs(info, 4))
    return Fail(env, "arrowBatchInto: expected (Uint8Array, number, number, number, Uint8Array)");
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Guarded(env, [&]() -> Napi::Value {
    const ArrowBatchWriter writer(
        bytes.Data(), bytes.ByteLength(), info[1].As<Napi::Number>().Int64Value(),
        info[2].As<Napi::Number>().Int64Value(), info[3].As<Napi::Number>().Uint32Value());
    return Into<ArrowBatchWriter>(env, writer, writer.size(), info[4].As<Napi::Uint8Array>(),
                                  [](const ArrowBatchWriter& w, uint8_t* out) {
                                    w.Write(out);
                                    return w.size();
                                  });
  });
}

/**
 * arrowBatchesAsync(payloads: Uint8Array[], from, to, maxRows, out: Uint8Array): a promise of
 * { written, rows, last, more }: WriteArrowBatches on a thread of libuv's pool, so the event loop
 * sends the group before while this one is written (D64). The payloads and out are held by a
 * reference until the promise settles; a corrupt block or an out smaller than the bound rejects it.
 */
class ArrowBatchesWorker : public Napi::AsyncWorker {
 public:
  ArrowBatchesWorker(Napi::Env env, Napi::Array payloads, int64_t from, int64_t to,
                     uint64_t maxRows, Napi::Uint8Array out)
      : Napi::AsyncWorker(env, "arrowBatchesAsync"),
        deferred_(Napi::Promise::Deferred::New(env)),
        from_(from),
        to_(to),
        maxRows_(maxRows),
        out_(out.Data()),
        capacity_(out.ByteLength()) {
    auto held = Napi::Object::New(env);
    held.Set("payloads", payloads);
    held.Set("out", out);
    held_ = Napi::Persistent(held);
    for (uint32_t i = 0; i < payloads.Length(); i++) {
      auto bytes = payloads.Get(i).As<Napi::Uint8Array>();
      blocks_.push_back({bytes.Data(), bytes.ByteLength()});
    }
  }

  [[nodiscard]] Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      taken_ = WriteArrowBatches(blocks_, from_, to_, maxRows_, out_, capacity_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    auto result = Napi::Object::New(env);
    result.Set("written", Napi::Number::New(env, static_cast<double>(taken_.written)));
    result.Set("rows", Napi::Number::New(env, static_cast<double>(taken_.rows)));
    result.Set("last", Napi::Number::New(env, static_cast<double>(taken_.last)));
    result.Set("more", Napi::Boolean::New(env, taken_.more));
    deferred_.Resolve(result);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference held_;
  std::vector<Payload> blocks_;
  int64_t from_, to_;
  uint64_t maxRows_;
  uint8_t* out_;
  size_t capacity_;
  GroupTaken taken_{};
};

Napi::Value ArrowBatchesAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsArray() || !info[1].IsNumber() || !info[2].IsNumber() ||
      !info[3].IsNumber() || !IsBytes(info[4]))
    return Fail(env,
                "arrowBatchesAsync: expected (Uint8Array[], number, number, number, Uint8Array)");
  auto payloads = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < payloads.Length(); i++)
    if (!IsBytes(payloads.Get(i))) return Fail(env, "arrowBatchesAsync: payloads are Uint8Arrays");
  const double maxRows = info[3].As<Napi::Number>().DoubleValue();
  auto* worker = new ArrowBatchesWorker(
      env, payloads, info[1].As<Napi::Number>().Int64Value(),
      info[2].As<Napi::Number>().Int64Value(),
      maxRows >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(maxRows < 0 ? 0 : maxRows),
      info[4].As<Napi::Uint8Array>());
  worker->Queue();  // libuv deletes it after OnOK or OnError
  return worker->Promise();
}

// arrowBatchBound(rows: number, kinds: Uint8Array): the most bytes a block's record batch takes
Napi::Value ArrowBound(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !IsBytes(info[1]))
    return Fail(env, "arrowBatchBound: expected (number, Uint8Array)");
  auto kinds = info[1].As<Napi::Uint8Array>();
  if (kinds.ElementLength() > kMaxColumns) return Fail(env, "arrowBatchBound: at most 255 columns");
  std::vector<FieldKind> fields;
  for (size_t i = 0; i < kinds.ElementLength(); i++) {
    if (kinds.Data()[i] > static_cast<uint8_t>(FieldKind::kFlag))
      return Fail(env, "arrowBatchBound: kinds 0..2");
    fields.push_back(static_cast<FieldKind>(kinds.Data()[i]));
  }
  const uint32_t rows = info[0].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(env, static_cast<double>(ArrowBatchBound(rows, fields)));
}

/** [[key, value]...] as KeyValues; false if it is not that. */
bool ReadKeyValues(const Napi::Value& v, KeyValues* out) {
  if (!v.IsArray()) return false;
  auto array = v.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); i++) {
    Napi::Value pair = array[i];
    if (!pair.IsArray() || pair.As<Napi::Array>().Length() != 2) return false;
    Napi::Value k = pair.As<Napi::Array>()[0u];
    Napi::Value val = pair.As<Napi::Array>()[1u];
    if (!k.IsString() || !val.IsString()) return false;
    out->emplace_back(k.As<Napi::String>().Utf8Value(), val.As<Napi::String>().Utf8Value());
  }
  return true;
}

Napi::Value Copy(Napi::Env env, const std::vector<uint8_t>& bytes) {
  return Napi::Buffer<uint8_t>::Copy(env, bytes.data(), bytes.size());
}

// arrowSchema(names: string[], kinds: Uint8Array, metadata: [string, string][]): Buffer
Napi::Value ArrowSchema(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeyValues metadata;
  if (info.Length() < 3 || !info[0].IsArray() || !IsBytes(info[1]) ||
      !ReadKeyValues(info[2], &metadata))
    return Fail(env, "arrowSchema: expected (string[], Uint8Array, [string, string][])");
  auto names = info[0].As<Napi::Array>();
  auto kinds = info[1].As<Napi::Uint8Array>();
  if (names.Length() != kinds.ElementLength() || names.Length() > kMaxColumns)
    return Fail(env, "arrowSchema: one kind per name, at most 255");
  std::vector<ArrowField> fields;
  for (uint32_t i = 0; i < names.Length(); i++) {
    Napi::Value name = names[i];
    if (!name.IsString() || kinds.Data()[i] > static_cast<uint8_t>(FieldKind::kFlag))
      return Fail(env, "arrowSchema: names are strings, kinds 0..2");
    fields.push_back(
        {name.As<Napi::String>().Utf8Value(), static_cast<FieldKind>(kinds.Data()[i])});
  }
  return Copy(env, ArrowSchemaMessage(fields, metadata));
}

// arrowEmptyBatch(columns: number, metadata: [string, string][]): Buffer
Napi::Value ArrowEmpty(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeyValues metadata;
  if (info.Length() < 2 || !info[0].IsNumber() || !ReadKeyValues(info[1], &metadata))
    return Fail(env, "arrowEmptyBatch: expected (number, [string, string][])");
  const uint32_t columns = info[0].As<Napi::Number>().Uint32Value();
  if (columns > kMaxColumns) return Fail(env, "arrowEmptyBatch: at most 255 columns");
  return Copy(env, ArrowEmptyBatch(static_cast<uint8_t>(columns), metadata));
}

}  // namespace

/** Adds the functions above to the addon's exports (called from addon.cc's Init). */
void RegisterAnswerWriters(Napi::Env env, Napi::Object exports) {
  exports.Set("blockJsonInto", Napi::Function::New(env, BlockJsonInto, "blockJsonInto"));
  exports.Set("arrowBatchInto", Napi::Function::New(env, ArrowBatchInto, "arrowBatchInto"));
  exports.Set("arrowBatchesAsync",
              Napi::Function::New(env, ArrowBatchesAsync, "arrowBatchesAsync"));
  exports.Set("arrowBatchBound", Napi::Function::New(env, ArrowBound, "arrowBatchBound"));
  exports.Set("arrowSchema", Napi::Function::New(env, ArrowSchema, "arrowSchema"));
  exports.Set("arrowEmptyBatch", Napi::Function::New(env, ArrowEmpty, "arrowEmptyBatch"));
  exports.Set("arrowEndOfStream",
              Napi::Buffer<uint8_t>::Copy(env, kArrowEndOfStream, sizeof kArrowEndOfStream));
}

}  // namespace meridian
