// How the CPU treats subnormal floating-point numbers (|x| < 2^−126 in fp32), per thread.
//
// On Intel cores a subnormal operand or result of a vector multiply-add takes a microcode assist, on the
// order of a hundred cycles where the operation takes one. The chunked DeltaNet rule multiplies by decays
// e^(γ_t − γ_s) that fall below fp32's normal range wherever a head forgets quickly (γ dropping by 1.5 per
// token reaches e^−96 within a 64-token chunk), so on the benchmark models most of its products were
// assists: with subnormals flushed, qwen35-0.8b pp512 went from 298–338 to 515–706 tok/s on an AMX Xeon
// (docs/performance.md, "Subnormal numbers"). A subnormal term is below 2^−126 of a normal one, so
// flushing it changes a sum only where the sum itself is that small.
//
// FlushSubnormals switches the calling thread to flush-to-zero (subnormal results become ±0) and
// denormals-are-zero (subnormal operands read as ±0), x86's MXCSR FTZ and DAZ bits, for the guard's
// lifetime; the previous mode comes back at its end. Pool loops (thread_pool.h) run each iteration under
// the mode of the thread that started the loop, so a result never depends on which thread computed it.
// Elsewhere than x86 the guard does nothing.
#pragma once
#include <cstdint>

namespace verdict::kernels {

class FlushSubnormals {
 public:
  FlushSubnormals();
  ~FlushSubnormals();
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  uint32_t previous_;
};

// The calling thread's floating-point control word (x86: MXCSR; elsewhere 0), and setting it: what the
// pool hands from the thread that starts a loop to the workers that join it.
uint32_t float_mode();
void set_float_mode(uint32_t mode);
// True while the calling thread flushes subnormals (FTZ and DAZ both set).
bool flushing_subnormals();

}  // namespace verdict::kernels
