// CRC-32C (Castagnoli): the checksum every storage block carries.
#pragma once
#include <cstddef>
#include <cstdint>

namespace meridian {
/** By the CPU's crc32 instruction where it has one, else by tables. */
uint32_t Crc32c(const uint8_t* data, size_t length, uint32_t crc = 0);
/** By tables alone: what the fuzz target checks the instruction against. */
uint32_t Crc32cPortable(const uint8_t* data, size_t length, uint32_t crc = 0);
}  // namespace meridian
