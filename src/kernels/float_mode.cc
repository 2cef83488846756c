#include "kernels/float_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace verdict::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr uint32_t kFlushToZero = 0x8000;      // MXCSR.FTZ
constexpr uint32_t kDenormalsAreZero = 0x0040;  // MXCSR.DAZ
constexpr uint32_t kFlush = kFlushToZero | kDenormalsAreZero;
#endif

}  // namespace

uint32_t float_mode() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#else
  return 0;
#endif
}

void set_float_mode([[maybe_unused]] uint32_t mode) {
#if defined(__x86_64__) || defined(__i386__)
  if (_mm_getcsr() != mode) _mm_setcsr(mode);
#endif
}

bool flushing_subnormals() {
#if defined(__x86_64__) || defined(__i386__)
  return (float_mode() & kFlush) == kFlush;
#else
  return false;
#endif
}

FlushSubnormals::FlushSubnormals() : previous_(float_mode()) {
#if defined(__x86_64__) || defined(__i386__)
  set_float_mode(previous_ | kFlush);
#endif
}

FlushSubnormals::~FlushSubnormals() { set_float_mode(previous_); }

}  // namespace verdict::kernels
