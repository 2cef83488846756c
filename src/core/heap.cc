#include "core/heap.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace verdict {

void tune_heap_for_inference() {
#if defined(__GLIBC__)
  // Fixed thresholds also switch off glibc's dynamic adjustment of them.
  mallopt(M_MMAP_THRESHOLD, 128 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace verdict
