// ggml block quantization, row by row: the reference quantizers llama.cpp uses when it writes a file
// (quantize_row_q8_0_ref, _q4_0_ref, _q4_1_ref, _q5_0_ref, _q5_1_ref, _q2_K_ref, _q3_K_ref, _q4_K_ref, _q5_K_ref,
// _q6_K_ref, and quantize_iq4_nl / _iq4_xs without importance weights, in ggml-quants.c, re-implemented
// here from their definitions: same scales, same rounding, same block layout), plus F16 and BF16.
// A row of n values occupies ggml_row_bytes(type, n) bytes. Reading these blocks back is the kernels'
// job (kernels::dequantize_row).
//
// Block layouts (little-endian):
//   Q8_0  34 B / 32 values: f16 d | 32 × int8 q                       x = d·q
//   Q4_0  18 B / 32 values: f16 d | 16 B nibbles (low: 0..15, high: 16..31)   x = d·(q − 8)
//   Q4_1  20 B / 32 values: f16 d | f16 m | 16 B nibbles (Q4_0's layout)        x = d·q + m
//   Q5_0  22 B / 32 values: f16 d | u32 qh (bit j: bit 4 of value j) | 16 B low nibbles   x = d·(q − 16)
//   Q5_1  24 B / 32 values: f16 d | f16 m | u32 qh | 16 B low nibbles (Q5_0's)     x = d·q + m
//   Q2_K  84 B / 256 values: 16 B scales (sc low nibble, m high) | 64 B 2-bit values | f16 d | f16 dmin
//   Q4_K 144 B / 256 values: f16 d | f16 dmin | 12 B packed 6-bit scales and mins | 128 B nibbles
//   Q5_K 176 B / 256 values: as Q4_K, with 32 B of fifth bits (bit j: sub-block j) before the nibbles
//   Q6_K 210 B / 256 values: 128 B low nibbles | 64 B high 2-bit pairs | 16 × int8 scales | f16 d
//   IQ4_NL 18 B / 32 values: f16 d | 16 B nibbles (Q4_0's layout)             x = d·kvalues_iq4nl[q]
//   IQ4_XS 136 B / 256 values: f16 d | u16 scales_h | 4 B scales_l | 128 B nibbles (IQ4_NL's, per 32 values)
#pragma once
#include <cstdint>
#include <span>

#include "formats/ggml_type.h"

namespace verdict::formats {

// True for the types quantize_row accepts (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K–Q6_K,
// IQ4_NL, IQ4_XS).
bool ggml_can_quantize(GgmlType type);

// Writes `x` (a whole number of blocks) as `type` into `out` (ggml_row_bytes(type, x.size()) bytes).
// Throws verdict::Error for other types or sizes.
void ggml_quantize_row(GgmlType type, std::span<const float> x, uint8_t* out);

}  // namespace verdict::formats
