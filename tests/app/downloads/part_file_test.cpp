#include "downloads/part_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace hearth::models {
namespace {

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("hearth_part_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(PartFile, AppendsKeepsAndTruncates) {
  const auto dir = temp_dir();
  const auto path = dir / "a.part";
  {
    auto f = PartFile::open(path, PartOpenMode::Truncate);
    ASSERT_TRUE(f.ok());
    const std::string text = "hello ";
    uint64_t written = 0;
    ASSERT_TRUE(f->append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, &written).ok());
    EXPECT_EQ(written, 6u);
  }
  {
    auto f = PartFile::open(path, PartOpenMode::Keep);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->size(), 6u);
    const std::string text = "world";
    uint64_t written = 0;
    ASSERT_TRUE(f->append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, &written).ok());
    ASSERT_TRUE(f->reserve(1 << 20).ok());
    EXPECT_EQ(f->size(), 11u);  // reserving does not change the size
  }
  EXPECT_EQ(read_all(path), "hello world");
  {
    auto f = PartFile::open(path, PartOpenMode::Keep);
    ASSERT_TRUE(f->truncate_to_zero().ok());
    EXPECT_EQ(f->size(), 0u);
  }
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  std::filesystem::remove_all(dir);
}

TEST(PartFile, SizeLimitActsLikeAFullDisk) {
  const auto dir = temp_dir();
  const auto path = dir / "b.part";
  auto f = PartFile::open(path, PartOpenMode::Truncate);
  ASSERT_TRUE(f.ok());
  f->set_size_limit(10);
  const std::vector<uint8_t> data(16, 'x');
  uint64_t written = 0;
  auto status = f->append(data, &written);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(written, 10u);
  EXPECT_NE(status.error().message.find("disk is full"), std::string::npos);
  EXPECT_NE(status.error().message.find("b.part"), std::string::npos);
  f->close();
  EXPECT_EQ(std::filesystem::file_size(path), 10u);
  std::filesystem::remove_all(dir);
}

TEST(PartFile, CommitRenamesIntoPlace) {
  const auto dir = temp_dir();
  const auto part = dir / "c.gguf.part";
  const auto dest = dir / "c.gguf";
  {
    auto f = PartFile::open(part, PartOpenMode::Truncate);
    const std::string text = "GGUF";
    uint64_t written = 0;
    ASSERT_TRUE(f->append({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, &written).ok());
  }
  ASSERT_TRUE(commit_part_file(part, dest).ok());
  EXPECT_FALSE(std::filesystem::exists(part));
  EXPECT_EQ(read_all(dest), "GGUF");
  EXPECT_FALSE(commit_part_file(dir / "missing.part", dir / "x").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::models
