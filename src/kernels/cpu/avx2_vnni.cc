// The AVX2 Int8 tiles on AVX-VNNI (compiled with -mavx2 -mfma -mf16c -mavxvnni): vpdpbusd on ymm registers, the
// int8 dot product of Intel's AVX2 client cores since Alder Lake, and of AMD's since Zen 5. Only called when the
// CPU has it (dispatch.cc); results are int8_tile_avx2's bit for bit (int8_avx2.h).
#include "kernels/cpu/int8_avx2.h"
#include "kernels/cpu/kernel_table.h"

namespace verdict::kernels::cpu {

void int8_tile_avx2_vnni(const PackedView& w, const QuantizedRows& a, int64_t t0, int64_t t1, int64_t p0, int64_t p1,
                         float* y, uint8_t* scratch) {
  int8_tile_avx2_impl<true>(w, a, t0, t1, p0, p1, y, scratch);
}

}  // namespace verdict::kernels::cpu
