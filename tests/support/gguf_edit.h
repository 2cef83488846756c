// Editing a GGUF file's header in place, for tests that need a tensor of a type verdict does not write.
#pragma once
#include <cstdint>
#include <string>

namespace verdict::testing {

// Sets the ggml type id of tensor `tensor` in the GGUF file at `path` (its tensor info: name, n_dims,
// ne[n_dims], type) and returns the id it had. Only for types of the same block geometry (e.g. Q3_K → IQ3_S),
// so that the data section stays valid. Fails the calling test and returns UINT32_MAX if the name is absent.
uint32_t relabel_gguf_tensor(const std::string& path, const std::string& tensor, uint32_t type);

}  // namespace verdict::testing
