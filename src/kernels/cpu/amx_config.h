// Private to kernels/ (and its benchmarks): the AMX tile configuration, ldtilecfg's 64-byte operand.
//
// Loaded with our own inline asm, not GCC 12's _tile_loadconfig: that intrinsic declares only the first 8 bytes
// of the configuration as read ("m" (*(const void**)config)), so the compiler may drop the stores of the
// rows and column widths before it as dead, and ldtilecfg then faults on whatever the stack held (seen here
// in a benchmark loop; llama.cpp's AMX kernels built with GCC 12 segfault the same way in ldtilecfg).
#pragma once
#include <cstdint>

namespace verdict::kernels::cpu {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};  // bytes per row of each tile
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

inline void load_tile_config(const TileConfig& c) { __asm__ volatile("ldtilecfg %0" : : "m"(c)); }

}  // namespace verdict::kernels::cpu
