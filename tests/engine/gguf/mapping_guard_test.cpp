// A mapped model file cut short under the reader: reading a page past the new
// end raises SIGBUS, which the mapping guard answers with zeros, and the file
// then reports the change as a clean error instead of the process dying. A
// SIGBUS that is not a read of a registered mapping still ends the process.
#include <hearth/engine/gguf/reader.h>

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

namespace hearth::gguf {
namespace {

namespace fs = std::filesystem;

TEST(MappingGuard, AReadPastATruncatedEndIsAnErrorNotACrash) {
  const fs::path copy = fs::path(::testing::TempDir()) / "hearth-mapping-guard.gguf";
  fs::copy_file(fs::path(HEARTH_TEST_DATA_DIR) / "models/tiny-llama-f32.gguf", copy,
                fs::copy_options::overwrite_existing);
  auto file = GgufFile::open(copy, LoadMode::Mmap);
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_TRUE(file->check_unchanged().ok());
  // The tensor whose data ends last, then cut the file before its first byte.
  const TensorInfo* last = &file->tensors().front();
  for (const auto& t : file->tensors()) {
    if (t.offset > last->offset) last = &t;
  }
  const std::span<const uint8_t> data = file->tensor_data(*last);
  ASSERT_GT(data.size(), 8192u);
  const uint64_t cut = file->data_offset() + last->offset;  // the file offset of its first byte
  fs::resize_file(copy, cut - (cut % 4096));
  // Without the guard this read ends the process with SIGBUS.
  uint64_t sum = 0;
  for (size_t i = 0; i < data.size(); i += 4096) sum += static_cast<volatile const uint8_t&>(data[i]);
  EXPECT_EQ(sum, 0u);  // the pages past the end read as zeros
  const Status st = file->check_unchanged();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("cut short"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find(copy.string()), std::string::npos) << st.error().message;
  fs::remove(copy);
}

TEST(MappingGuardDeathTest, AnyOtherSigbusStillEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        // The guard is installed by any mapping.
        auto file = GgufFile::open(fs::path(HEARTH_TEST_DATA_DIR) / "models/stories260K.gguf", LoadMode::Mmap);
        (void)file;
        std::raise(SIGBUS);
      },
      "");
}

}  // namespace
}  // namespace hearth::gguf
