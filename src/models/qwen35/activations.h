// Activation buffers of a forward step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace verdict::models::qwen35 {

// n floats whose values start undefined: no zero fill (which cost 2 % of prefill). Only for arrays that
// the next operation overwrites entirely before anything reads them (a matmul's output, a norm's).
class Activations {
 public:
  explicit Activations(int64_t n) : data_(new float[static_cast<std::size_t>(n)]) {}
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }

 private:
  std::unique_ptr<float[]> data_;
};

}  // namespace verdict::models::qwen35
