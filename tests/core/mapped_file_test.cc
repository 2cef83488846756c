#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "core/error.h"

namespace verdict {
namespace {

TEST(MappedFile, MapsContentsAndReportsMissingFiles) {
  const std::string path = ::testing::TempDir() + "/mapped_file_test_" + std::to_string(::getpid()) + ".bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << "hello";
  }
  MappedFile f(path);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.data()), f.size()), "hello");
  MappedFile moved = std::move(f);
  EXPECT_EQ(moved.size(), 5u);
  EXPECT_EQ(f.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is defined
  std::remove(path.c_str());
  try {
    MappedFile missing("/nonexistent/file.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/file.safetensors"), std::string::npos);
  }
  EXPECT_THROW(MappedFile("/tmp"), Error);  // a folder is not a regular file
}

}  // namespace
}  // namespace verdict
