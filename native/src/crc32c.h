// CRC-32C (Castagnoli): the checksum every storage block carries.
#pragma once
#include <cstddef>
#include <cstdint>

namespace meridian {
uint32_t Crc32c(const uint8_t* data, size_t length, uint32_t crc = 0);
}
