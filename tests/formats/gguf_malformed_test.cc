// Malformed GGUF input: every problem is one verdict::Error naming the file and the problem, found
// without allocating what forged counts ask for.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/gguf.h"
#include "gguf_samples.h"

namespace verdict::formats {
namespace {

// Builds GGUF bytes by hand.
struct Bytes {
  std::vector<uint8_t> b;
  Bytes& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& raw(std::size_t n, uint8_t v = 0) {
    b.insert(b.end(), n, v);
    return *this;
  }
  Bytes& pad(std::size_t a = 32) {
    while (b.size() % a != 0) b.push_back(0);
    return *this;
  }
  // "GGUF", version 3, counts.
  static Bytes header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    Bytes x;
    x.u32(0x46554747).u32(version).u64(tensors).u64(kvs);
    return x;
  }
};

// A tensor info entry.
Bytes& tensor(Bytes& x, const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
  x.str(name).u32(static_cast<uint32_t>(ne.size()));
  for (uint64_t d : ne) x.u64(d);
  return x.u32(type).u64(offset);
}

void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  try {
    (void)parse_gguf(bytes.data(), bytes.size(), "bad.gguf");
    ADD_FAILURE() << "parsed, expected an error containing: " << fragment;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

TEST(GgufMalformed, EveryTruncationIsAnError) {
  const std::vector<uint8_t> full = testing::sample_gguf();
  const GgufHeader h = parse_gguf(full.data(), full.size(), "sample.gguf");
  const uint64_t data_end = h.data_offset + h.tensors.back().offset + h.tensors.back().nbytes;
  for (std::size_t n = 0; n < full.size(); ++n) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < data_end) {
      EXPECT_THROW((void)parse_gguf(cut.data(), cut.size(), "cut.gguf"), Error) << n;
    } else {
      EXPECT_NO_THROW((void)parse_gguf(cut.data(), cut.size(), "cut.gguf")) << n;  // only padding cut
    }
  }
}

TEST(GgufMalformed, HeaderProblems) {
  expect_error({}, "no GGUF magic");
  expect_error({'G', 'G', 'U', 'X', 3, 0, 0, 0}, "bad magic");
  expect_error(Bytes::header(0, 0, 1).b, "version 1 is not supported");
  expect_error(Bytes::header(0, 0, 7).b, "unsupported GGUF version 7");
  expect_error(Bytes::header(0, 0, 0x03000000).b, "big-endian");
  expect_error(Bytes::header(0, uint64_t{1} << 60).b, "metadata count");
  expect_error(Bytes::header(uint64_t{1} << 61, 0).b, "tensor count");
}

TEST(GgufMalformed, MetadataProblems) {
  auto one_kv = [](const std::string& key, uint32_t type) { return Bytes::header(0, 1).str(key).u32(type); };
  expect_error(Bytes::header(0, 1).u64(uint64_t{1} << 62).raw(20).b, "bytes long");
  expect_error(Bytes::header(0, 1).str("").u32(4).u32(1).b, "empty metadata key");
  expect_error(one_kv("bad\xFFkey", 4).u32(1).b, "not valid UTF-8");
  expect_error(one_kv("k", 13).u32(1).b, "unknown value type 13");
  expect_error(one_kv("k", 7).raw(1, 2).b, "bool value 2");
  expect_error(one_kv("k", 8).u64(uint64_t{1} << 50).raw(16).b, "truncated file");
  expect_error(one_kv("k", 9).u32(9).u64(1).raw(16).b, "nested arrays");
  expect_error(one_kv("k", 9).u32(14).u64(1).raw(16).b, "unknown array element type 14");
  expect_error(one_kv("k", 9).u32(8).u64(uint64_t{1} << 58).raw(16).b, "array of");
  expect_error(one_kv("k", 9).u32(12).u64(uint64_t{1} << 61).raw(16).b, "array of");
  expect_error(one_kv("k", 9).u32(7).u64(2).raw(1, 1).raw(1, 5).b, "bool value 5");
  Bytes dup = Bytes::header(0, 2);
  dup.str("k").u32(4).u32(1).str("k").u32(4).u32(2);
  expect_error(dup.b, "'k' appears twice");
}

TEST(GgufMalformed, AlignmentProblems) {
  expect_error(Bytes::header(0, 1).str("general.alignment").u32(4).u32(24).b, "not a power of two");
  expect_error(Bytes::header(0, 1).str("general.alignment").u32(4).u32(0).b, "not a power of two");
  expect_error(Bytes::header(0, 1).str("general.alignment").u32(10).u64(32).b, "expected u32");
}

TEST(GgufMalformed, TensorInfoProblems) {
  auto one = [](const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    Bytes x = Bytes::header(1, 0);
    tensor(x, name, std::move(ne), type, offset);
    return x.pad().raw(64).b;
  };
  expect_error(one("t", {}, 0, 0), "0 dimensions");
  expect_error(one("t", {1, 1, 1, 1, 1}, 0, 0), "5 dimensions");
  expect_error(one("t", {4}, 4, 0), "unknown or unsupported ggml type 4");
  expect_error(one("t", {4}, 1000, 0), "unknown or unsupported ggml type 1000");
  expect_error(one("t", {31}, 8, 0), "not a multiple of the Q8_0 block size 32");
  expect_error(one("t", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0), "overflow");
  expect_error(one("t", {uint64_t{1} << 63}, 0, 0), "too large");
  expect_error(one("t", {uint64_t{1} << 62}, 0, 0), "overflows the byte size");
  expect_error(one("t", {uint64_t{1} << 60, 4}, 0, 0), "overflows the byte size");
  expect_error(one("t", {4}, 0, 8), "not a multiple of the alignment");
  expect_error(one("t", {32}, 0, 0), "past the end of the data section");
  expect_error(one("t", {4}, 0, uint64_t{1} << 62), "past the end of the data section");
  expect_error(one("bad\xC3", {4}, 0, 0), "not valid UTF-8");
  Bytes two = Bytes::header(2, 0);
  tensor(two, "a", {16}, 0, 0);
  tensor(two, "b", {4}, 0, 32);
  expect_error(two.pad().raw(128).b, "overlaps tensor 'a'");
  Bytes dup = Bytes::header(2, 0);
  tensor(dup, "a", {4}, 0, 0);
  tensor(dup, "a", {4}, 0, 32);
  expect_error(dup.pad().raw(64).b, "'a' appears twice");
}

TEST(GgufMalformed, ValidCornerCases) {
  // No tensors at all, a file ending right after the infos, and an empty tensor.
  const Bytes empty = Bytes::header(0, 0);
  EXPECT_NO_THROW((void)parse_gguf(empty.b.data(), empty.b.size(), "empty.gguf"));
  Bytes zero = Bytes::header(1, 0);
  tensor(zero, "z", {0, 5}, 0, 0);
  zero.pad();
  const GgufHeader h = parse_gguf(zero.b.data(), zero.b.size(), "zero.gguf");
  EXPECT_EQ(h.tensors[0].nbytes, 0u);
  EXPECT_EQ(h.tensors[0].rows(), 0);
}

}  // namespace
}  // namespace verdict::formats
