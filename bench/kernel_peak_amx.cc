// Register-only peak loops of the AMX tile instructions for kernels_bench: 4 independent C tiles (tmm0–tmm3)
// multiplied by tiles that stay loaded (tmm4–tmm7), `iters` rounds of 4 instructions, no memory traffic past
// the first loads. Compiled with the AMX flags; called only where kernels::amx_supported() (which also asks
// the kernel for the tile data).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/amx_config.h"

namespace verdict::bench {
namespace {

// Tiles 0–3 (C) 16 × 64 bytes; A (4, 5) 16 rows of a_bytes; B (6, 7) a_bytes / 4 rows of 64 bytes.
void configure(int a_bytes) {
  kernels::cpu::TileConfig c;
  for (int t = 0; t < 4; ++t) {
    c.rows[t] = 16;
    c.colsb[t] = 64;
  }
  for (int t = 4; t < 6; ++t) {
    c.rows[t] = 16;
    c.colsb[t] = static_cast<uint16_t>(a_bytes);
    c.rows[t + 2] = static_cast<uint8_t>(a_bytes / 4);
    c.colsb[t + 2] = 64;
  }
  kernels::cpu::load_tile_config(c);
}

alignas(64) const uint8_t kOnes[1024] = {};  // zeros: the loops measure issue rate, not values

void load_operands() {
  _tile_loadd(4, kOnes, 64);
  _tile_loadd(5, kOnes, 64);
  _tile_loadd(6, kOnes, 64);
  _tile_loadd(7, kOnes, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

}  // namespace

// `iters` rounds of OP on the 4 C tiles: each C tile's chain waits only for its own previous product.
#define VERDICT_TILE_ROUNDS(OP) \
  for (int64_t i = 0; i < iters; ++i) { \
    OP(0, 4, 6);                         \
    OP(1, 4, 7);                         \
    OP(2, 5, 6);                         \
    OP(3, 5, 7);                         \
  }

// tdpbssd with K = k_bytes (64: full tiles, 16 × 16 × 64 multiply-adds; 32: the Int8 tiles' 32-column blocks).
void tdpbssd_peak(int64_t iters, int k_bytes) {
  configure(k_bytes);
  load_operands();
  VERDICT_TILE_ROUNDS(_tile_dpbssd)
  _tile_release();
}

// tdpbf16ps on full tiles: 16 × 16 × 32 bf16 multiply-adds.
void tdpbf16ps_peak(int64_t iters) {
  configure(64);
  load_operands();
  VERDICT_TILE_ROUNDS(_tile_dpbf16ps)
  _tile_release();
}

#undef VERDICT_TILE_ROUNDS

}  // namespace verdict::bench
