// How the addon's Node-API functions fail: a TypeError for arguments of the
// wrong shape, and a JS Error for what the codec throws (a corrupt block
// never crashes). Shared by addon.cc and addon-answers.cc.
#pragma once

#include <napi.h>

#include <exception>

namespace meridian {

inline Napi::Value Fail(Napi::Env env, const char* what) {
  Napi::TypeError::New(env, what).ThrowAsJavaScriptException();
  return env.Undefined();
}

/** Runs f, turning a codec error (CorruptBlock and the like) into a JS exception. */
template <typename F>
Napi::Value Guarded(Napi::Env env, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    Napi::Error::New(env, e.what()).ThrowAsJavaScriptException();
    return env.Undefined();
  }
}

}  // namespace meridian
