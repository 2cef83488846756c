#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// Resident kB of the mapping that starts at `begin`, from /proc/self/smaps (−1 when not found).
long resident_kb(const void* begin) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    if (dash != std::string::npos && dash > 0 && line.find(' ') > dash) {  // "start-end perms ..." header
      in = std::stoull(line.substr(0, dash), nullptr, 16) == reinterpret_cast<std::uintptr_t>(begin);
    } else if (in && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

TEST(MappedFile, DroppedPagesLeaveResidentMemoryAndReadBackUnchanged) {
  const long page = ::sysconf(_SC_PAGE_SIZE);
  const std::string path = ::testing::TempDir() + "/mapped_drop_test_" + std::to_string(::getpid()) + ".bin";
  std::vector<uint8_t> bytes(static_cast<std::size_t>(64 * page));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  MappedFile f(path);
  std::remove(path.c_str());  // the mapping keeps the data
  ASSERT_EQ(f.size(), bytes.size());
  EXPECT_TRUE(f.contains(f.data(), f.size()));
  EXPECT_TRUE(f.contains(f.data() + f.size(), 0));
  EXPECT_FALSE(f.contains(f.data() + 1, f.size()));
  EXPECT_FALSE(f.contains(bytes.data(), 1));
  unsigned sum = 0;
  for (std::size_t i = 0; i < f.size(); i += 64) sum += f.data()[i];  // fault every page in
  EXPECT_NE(sum, 0u);
  const long before = resident_kb(f.data());
  ASSERT_GE(before, 64 * page / 1024);
  // Pages 8 .. 39 entirely inside [8 pages − 100 bytes, 40 pages + 100 bytes): 32 pages go.
  f.drop_pages(f.data() + 8 * page - 100, static_cast<std::size_t>(32 * page + 200));
  EXPECT_EQ(resident_kb(f.data()), before - 32 * page / 1024);
  EXPECT_EQ(0, std::memcmp(f.data(), bytes.data(), bytes.size()));  // read back from the file
  // Memory outside the mapping is never touched.
  const std::vector<uint8_t> copy = bytes;
  f.drop_pages(bytes.data(), bytes.size());
  EXPECT_EQ(bytes, copy);
}

}  // namespace
}  // namespace verdict
