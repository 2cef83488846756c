// Conversions of stored tensors to fp32.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "formats/safetensors.h"

namespace verdict::formats {

// Upcasts an F32/F16/BF16 (or F64) tensor to fp32, exactly (F64 rounds to nearest).
// Throws verdict::Error naming the tensor for any other dtype.
std::vector<float> to_f32(const TensorView& t);
void to_f32(const TensorView& t, std::span<float> out);

}  // namespace verdict::formats
