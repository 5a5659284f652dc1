// Entry point of the native addon. The JS wrapper (src/storage/native.ts)
// validates arguments; functions here check only what memory safety needs.
#include <napi.h>

#include "crc32c.h"

namespace {

Napi::Value Crc32c(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray()) {
    Napi::TypeError::New(env, "crc32c: expected a Uint8Array").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto bytes = info[0].As<Napi::Uint8Array>();
  return Napi::Number::New(env, meridian::Crc32c(bytes.Data(), bytes.ByteLength()));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("crc32c", Napi::Function::New(env, Crc32c, "crc32c"));
  return exports;
}

}  // namespace

NODE_API_MODULE(meridian_native, Init)
