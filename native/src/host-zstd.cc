#include "host-zstd.h"

#include <memory>
#include <stdexcept>

// zstd's stable API (zstd.h), resolved from the node executable at load time.
extern "C" {
using ZSTD_CCtx = struct ZSTD_CCtx_s;
ZSTD_CCtx* ZSTD_createCCtx(void);
size_t ZSTD_freeCCtx(ZSTD_CCtx* cctx);
size_t ZSTD_compressCCtx(ZSTD_CCtx* cctx, void* dst, size_t dstCapacity, const void* src,
                         size_t srcSize, int compressionLevel);
size_t ZSTD_compressBound(size_t srcSize);
unsigned ZSTD_isError(size_t code);
}

namespace meridian {

void HostZstd(const uint8_t* src, size_t size, int level, std::vector<uint8_t>& out) {
  struct Free {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_CCtx, Free> cctx(ZSTD_createCCtx());
  if (!cctx) throw std::runtime_error("zstd: no compression context");
  const size_t at = out.size();
  out.resize(at + ZSTD_compressBound(size));
  const size_t n =
      ZSTD_compressCCtx(cctx.get(), out.data() + at, out.size() - at, src, size, level);
  if (ZSTD_isError(n)) throw std::runtime_error("zstd: compression failed");
  out.resize(at + n);
}

}  // namespace meridian
