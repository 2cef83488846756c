// Run-time selection of the instruction set the optimized kernels use.
#pragma once
#include <string_view>

namespace verdict::kernels {

enum class Isa { Scalar, Avx2, Avx512 };

std::string_view isa_name(Isa isa);
// Whether this CPU (and this build) can run the kernels of `isa`. Scalar is always supported.
bool isa_supported(Isa isa);
// The best supported ISA.
Isa best_isa();
// The ISA in use: $VERDICT_ISA ("scalar", "avx2", "avx512") when set, else best_isa().
Isa active_isa();
// Switches the ISA (tests, benchmarks). Throws verdict::Error when it is not supported.
void set_active_isa(Isa isa);

}  // namespace verdict::kernels
