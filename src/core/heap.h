// Process-wide allocator settings for inference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace verdict {

// v rounded up to a multiple of `to` (> 0).
constexpr std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// Keeps freed large buffers (up to hundreds of MB) in the heap for reuse, instead of glibc's default
// of mapping every allocation above 128 KiB – 32 MiB afresh and returning it to the kernel on free:
// faulting a buffer's pages in again each time it is allocated costs as much as a pass over it. (A
// forward step's activations come from a ScratchArena instead, core/scratch.h: glibc can still unmap an
// emptied heap of a thread other than the main one, whatever these settings.)
// Allocations below 128 MiB come from the heap; up to 256 MiB of freed memory may stay with the
// process. Call once at start-up, before any thread is created; a no-op on other C libraries.
void tune_heap_for_inference();

// Zeroed, 64-byte-aligned memory for weights that every decoded token streams from DRAM (the packed
// matrices), or nullptr when there is none. From kWeightMappingBytes on, the block is its own anonymous
// mapping, 2 MiB-aligned and marked MADV_HUGEPAGE (unless VERDICT_HUGE_PAGES=0): under the kernel's default
// `madvise` mode of transparent huge pages, 4 KiB pages cost a TLB miss and a restarted hardware prefetcher
// every 4 KiB of the stream (docs/performance.md, "Decode: prefetches and huge pages"). Smaller blocks come
// from the heap. Release with free_weight_memory(p, bytes), `bytes` as allocated. The sequence pools' KV caches come
// from here too: a fresh mapping's pages are committed only where a sequence writes (models/qwen35/seq_state.h).
constexpr int64_t kWeightMappingBytes = int64_t{2} << 20;
uint8_t* allocate_weight_memory(int64_t bytes);
void free_weight_memory(uint8_t* p, int64_t bytes);

}  // namespace verdict
