#include "value-columns.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "block-view.h"

namespace meridian {
namespace {

void Varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

/** A length-delimited payload: its length, then the body. */
std::vector<uint8_t> Delimited(const std::vector<uint8_t>& body) {
  std::vector<uint8_t> out;
  out.reserve(body.size() + 10);
  Varint(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

/** A packed field inside a message: tag, length, body. */
void PackedField(std::vector<uint8_t>& message, uint32_t field, const std::vector<uint8_t>& body) {
  if (body.empty()) return;  // proto3: an empty repeated field is absent
  Varint(message, (field << 3) | 2);
  Varint(message, body.size());
  message.insert(message.end(), body.begin(), body.end());
}

template <typename T>
std::vector<uint8_t> Fixed(const BlockView& b, uint8_t c, uint32_t begin, uint32_t stop) {
  std::vector<uint8_t> body((stop - begin) * sizeof(T));
  const T* values = static_cast<const T*>(b.column(c).values);
  std::memcpy(body.data(), values + begin, body.size());  // little endian, as the wire form
  if (b.column(c).anyMissing) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (uint32_t i = begin; i < stop; i++)
      if (b.Missing(c, i)) std::memcpy(body.data() + (i - begin) * sizeof(T), &nan, sizeof(T));
  }
  return body;
}

}  // namespace

ColumnParts WriteBlockColumns(const uint8_t* data, size_t size, int64_t from, int64_t to, uint32_t maxRows) {
  const BlockView block(data, size);
  const BlockHeader& h = block.header();
  const double* ts = block.timestamps();
  const auto [begin, stop, taken] = block.Select(from, to, maxRows);
  ColumnParts out{{}, taken};

  std::vector<uint8_t> body;
  body.reserve(static_cast<size_t>(stop - begin) * 5);
  for (uint32_t i = begin; i < stop; i++) Varint(body, static_cast<uint64_t>(static_cast<int64_t>(ts[i])));  // int64: two's complement
  out.parts.push_back(Delimited(body));

  for (uint8_t c = 0; c < h.columns; c++) {
    std::vector<uint8_t> message;
    switch (h.kinds[c]) {
      case FieldKind::kSingle:
        PackedField(message, 1, Fixed<float>(block, c, begin, stop));
        break;
      case FieldKind::kDouble:
        PackedField(message, 2, Fixed<double>(block, c, begin, stop));
        break;
      case FieldKind::kFlag: {
        std::vector<uint8_t> flags, missing;
        flags.reserve(stop - begin);
        const int32_t* values = static_cast<const int32_t*>(block.column(c).values);
        for (uint32_t i = begin; i < stop; i++) {
          if (block.Missing(c, i)) {
            flags.push_back(0);
            Varint(missing, i - begin);
          } else {
            Varint(flags, static_cast<uint64_t>(static_cast<int64_t>(values[i])));  // int32: sign-extended
          }
        }
        PackedField(message, 3, flags);
        PackedField(message, 4, missing);
        break;
      }
    }
    out.parts.push_back(Delimited(message));
  }
  return out;
}

}  // namespace meridian
