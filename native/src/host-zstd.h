// zstd from the Node.js process that loads the addon: Node (23.8 and later)
// carries zstd for node:zlib and exports its symbols, as it does zlib's and
// OpenSSL's, so the addon compresses Parquet pages (D64) without a second
// copy of the library or a build dependency. One compression context per
// thread, reused: a fresh one per page would cost more than the page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meridian {

/** Appends the zstd frame of [src, src + size) at `level` to out; throws std::runtime_error. */
void HostZstd(const uint8_t* src, size_t size, int level, std::vector<uint8_t>& out);

}  // namespace meridian
