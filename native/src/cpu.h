// Which instructions this CPU offers the addon's vector and checksum paths.
#pragma once

#include <cstdlib>

namespace meridian {

/**
 * Whether SSE4.2 may be used (x86-64 only). MERIDIAN_NATIVE_PORTABLE=1 says
 * no regardless, so that native/check.sh tests the plain paths on a machine
 * that has it. A function, asked when first needed: static initialisation
 * may run before the CPU detection's own.
 */
inline bool UseSse42() {
#if defined(__x86_64__)
  static const bool use = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0 &&
           std::getenv("MERIDIAN_NATIVE_PORTABLE") == nullptr;
  }();
  return use;
#else
  return false;
#endif
}

}  // namespace meridian
