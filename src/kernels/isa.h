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

// Intel AMX tiles under the AVX-512 ISA. AMX-INT8: the Int8 prefill products run groups of 16 tokens on them,
// with the VNNI results bit for bit (same integer sums, same fp32 steps; ops.h). AMX-BF16: every Bf16 product
// runs on them (its pair sums round in another order than vdpbf16ps's, within the same contract).
// Supported when the CPU has them, the OS enables their state and grants this process the tile data.
bool amx_supported();
// Supported and not switched off: $VERDICT_AMX=0 switches them off at start, set_amx_enabled at any time.
bool amx_enabled();
// Switches the tiles on or off (tests, benchmarks); on where they are not supported does nothing.
void set_amx_enabled(bool on);

}  // namespace verdict::kernels
