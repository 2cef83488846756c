// Process-wide allocator settings for inference.
#pragma once

namespace verdict {

// Keeps freed activation buffers (up to hundreds of MB) in the heap for reuse, instead of glibc's default
// of mapping every allocation above 128 KiB – 32 MiB afresh and returning it to the kernel on free: a
// forward step allocates its per-layer buffers anew (the 0.8B model's MLP: 512 tokens × 3584 × 4 bytes =
// 7 MiB each), and faulting their pages in again on every layer cost a third of the prefill time.
// Allocations below 128 MiB come from the heap; up to 256 MiB of freed memory may stay with the
// process. Call once at start-up, before any thread is created; a no-op on other C libraries.
void tune_heap_for_inference();

}  // namespace verdict
