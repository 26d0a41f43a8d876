// Every file of the malformed corpus (tests/data/gguf-malformed, written by
// its generate.py) must be refused with a clear error: never a crash, an
// out-of-bounds read (run under the asan preset) or a huge allocation.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hearth::gguf {
namespace {

const std::filesystem::path kCorpus = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "gguf-malformed";

struct Case {
  std::string file;
  std::string expected_text;
};

std::vector<Case> read_manifest() {
  std::vector<Case> cases;
  std::ifstream in(kCorpus / "MANIFEST.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    cases.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
  }
  return cases;
}

TEST(MalformedCorpus, HasAtLeastFortyCases) { EXPECT_GE(read_manifest().size(), 40u); }

TEST(MalformedCorpus, ControlFileLoads) {
  auto file = GgufFile::open(kCorpus / "control-valid.gguf.ok");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->tensors().size(), 2u);
}

TEST(MalformedCorpus, EveryFileIsRefusedWithAClearError) {
  const auto cases = read_manifest();
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    for (LoadMode mode : {LoadMode::Mmap, LoadMode::Memory}) {
      auto file = GgufFile::open(kCorpus / c.file, mode);
      ASSERT_FALSE(file.ok()) << c.file << " was accepted";
      const auto& message = file.error().message;
      EXPECT_NE(file.error().code, ErrorCode::Internal) << c.file;
      EXPECT_NE(message.find(c.file), std::string::npos) << c.file << ": message does not name the file: " << message;
      EXPECT_NE(message.find(c.expected_text), std::string::npos)
          << c.file << ": expected '" << c.expected_text << "' in: " << message;
    }
  }
}

TEST(MalformedCorpus, EveryPrefixOfAValidFileIsRefused) {
  std::ifstream in(kCorpus / "control-valid.gguf.ok", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto file = GgufFile::from_bytes(std::span(bytes.data(), cut), "prefix");
    EXPECT_FALSE(file.ok()) << "prefix of " << cut << " bytes accepted";
  }
}

TEST(MalformedCorpus, SingleByteCorruptionsNeverCrash) {
  std::ifstream in(kCorpus / "control-valid.gguf.ok", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x80}, uint8_t{0x7F}}) {
      auto copy = bytes;
      copy[i] = value;
      auto file = GgufFile::from_bytes(copy, "mutated");
      if (!file.ok()) {
        ++refused;
        EXPECT_FALSE(file.error().message.empty());
      }
    }
  }
  // Flipping bytes of counts, lengths and types must be caught somewhere.
  EXPECT_GT(refused, bytes.size() / 4);
}

}  // namespace
}  // namespace hearth::gguf
