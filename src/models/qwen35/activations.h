// Activation buffers of a forward step.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/scratch.h"

namespace verdict::models::qwen35 {

// n floats whose values start undefined: no zero fill (which cost 2 % of prefill). Only for arrays that
// the next operation overwrites entirely before anything reads them (a matmul's output, a norm's). They
// come from the calling thread's ScratchArena (core/scratch.h): a step of a shape run before takes no
// memory from the system, and so faults in no page.
class Activations {
 public:
  explicit Activations(int64_t n) : buffer_(static_cast<std::size_t>(n)) {}
  float* data() { return buffer_.data(); }
  const float* data() const { return buffer_.data(); }

 private:
  ScratchBuffer<float> buffer_;
};

}  // namespace verdict::models::qwen35
