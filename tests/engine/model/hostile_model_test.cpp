// Model files that lie or change: metadata with values no model can have
// (written with the GGUF writer from a fixture model), files truncated after
// the load or while the weights are copied, and paths that are not regular
// files. Every case must end in an error naming the file (and key or offset),
// never a crash, a hang or silently wrong numbers.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/model/weight_memory.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>

#include "fixture_logits.h"
#include "model_rewrite.h"

namespace hearth::model {
namespace {

namespace fs = std::filesystem;
using hearth::testing::data_path;

const std::string kFixture = data_path("models/tiny-llama-f32.gguf");

// The fixture model rewritten with `key` set to `value` (added or replaced).
std::string rewrite_with(const std::string& name, const std::string& key, gguf::Value value) {
  return hearth::testing::rewrite_model_with(kFixture, name, key, std::move(value));
}

struct BadValue {
  const char* key;
  double value;
};

TEST(HostileModel, MetadataThatMakesNoSenseIsRefusedNamingKeyAndFile) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const BadValue cases[] = {
      {"llama.rope.freq_base", nan},
      {"llama.rope.freq_base", inf},
      {"llama.rope.freq_base", 0.0},
      {"llama.rope.freq_base", -10000.0},
      {"llama.attention.layer_norm_rms_epsilon", nan},
      {"llama.attention.layer_norm_rms_epsilon", 0.0},
      {"llama.attention.layer_norm_rms_epsilon", -1e-5},
      {"llama.attention.layer_norm_rms_epsilon", -inf},
      {"llama.rope.scaling.factor", 0.0},
      {"llama.rope.scaling.factor", nan},
      {"llama.rope.scaling.factor", -4.0},
      {"llama.rope.scale_linear", inf},
      {"llama.rope.scaling.attn_factor", nan},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string path =
        rewrite_with("hearth-bad-meta-" + std::to_string(i++) + ".gguf", c.key, gguf::make_float32(static_cast<float>(c.value)));
    auto loaded = Model::load(path);
    ASSERT_FALSE(loaded.ok()) << c.key << " = " << c.value;
    EXPECT_EQ(loaded.error().code, ErrorCode::InvalidFormat);
    const std::string& msg = loaded.error().message;
    EXPECT_EQ(msg.rfind(path + ": key '" + c.key + "' = ", 0), 0u) << msg;
    EXPECT_NE(msg.find("must be a finite number greater than 0"), std::string::npos) << msg;
    fs::remove(path);
  }
  // A sane value in the same key still loads (the check is not a blanket refusal).
  const std::string ok_path = rewrite_with("hearth-good-meta.gguf", "llama.rope.freq_base", gguf::make_float32(500000.0f));
  auto ok = Model::load(ok_path);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  fs::remove(ok_path);
}

std::string copy_fixture(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  fs::copy_file(kFixture, path, fs::copy_options::overwrite_existing);
  return path;
}

Status run_one_token(const Model& m) {
  auto be = backend::make_cpu_backend({1});
  auto cache = kv::KvCache::create(*be, m.kv_config(8, DType::F16));
  if (!cache.ok()) return cache.take_error();
  const std::vector<int32_t> ids = {1}, pos = {0};
  std::vector<float> logits;
  return m.forward(*be, **cache, Batch{ids, pos}, LogitsRows::Last, logits);
}

TEST(HostileModel, AMappedModelTruncatedAfterTheLoadIsACleanErrorNotSigbus) {
  const std::string path = copy_fixture("hearth-truncated-mapped.gguf");
  LoadOptions opts;
  opts.weights = WeightMemory::Mapped;
  auto model = Model::load(path, opts);
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_TRUE(run_one_token(**model).ok());
  const uint64_t size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  // Reading the weights now would touch pages past the end of the file.
  auto st = run_one_token(**model);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::Io);
  EXPECT_EQ(st.error().message, path + ": the file shrank from " + std::to_string(size) + " to " +
                                    std::to_string(size / 2) + " bytes while the model was in use; load it again");
  fs::remove(path);
}

TEST(HostileModel, AMappedModelRewrittenInPlaceIsRefused) {
  const std::string path = copy_fixture("hearth-rewritten-mapped.gguf");
  LoadOptions opts;
  opts.weights = WeightMemory::Mapped;
  auto model = Model::load(path, opts);
  ASSERT_TRUE(model.ok()) << model.error().message;
  {
    // What a rewrite in place leaves: the same size, a new modification time.
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  auto st = run_one_token(**model);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, path + ": the file was modified while the model was in use; load it again");
  fs::remove(path);
}

TEST(HostileModel, AFileTruncatedDuringTheWeightCopyNamesTheFileAndOffset) {
  const std::string path = copy_fixture("hearth-truncated-copy.gguf");
  const uint64_t size = fs::file_size(path);
  WeightReadOptions options;
  options.chunk_bytes = 4096;
  int calls = 0;
  auto read = read_weights_file(
      path, 0, size, [&](uint64_t) { if (calls++ == 0) fs::resize_file(path, 8192); }, options);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::Io);
  EXPECT_EQ(read.error().message, path + ": the file was truncated at byte 8192 while it was read (it had " +
                                      std::to_string(size) + " bytes), the weights reach byte " + std::to_string(size));
  fs::remove(path);
}

TEST(HostileModel, AFileReplacedBetweenHeaderAndCopyIsRefused) {
  const std::string path = copy_fixture("hearth-replaced.gguf");
  auto header = gguf::GgufFile::open(path);
  ASSERT_TRUE(header.ok());
  const std::string other = copy_fixture("hearth-replacement.gguf");
  fs::rename(other, path);
  WeightReadOptions options;
  options.expect_device = header->file_device();
  options.expect_inode = header->file_inode();
  auto read = read_weights_file(path, 0, 64, {}, options);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, path + ": the file was replaced while the model was loading; load it again");
  fs::remove(path);
}

TEST(HostileModel, PathsThatAreNotRegularFilesAreRefusedWithoutBlocking) {
  const std::string fifo = ::testing::TempDir() + "hearth-model-fifo.gguf";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string dir = ::testing::TempDir() + "hearth-model-dir.gguf";
  fs::create_directories(dir);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "a FIFO"}, {"/dev/zero", "a character device"}, {dir, "a directory"}};
  for (const auto& [path, kind] : cases) {
    for (WeightMemory where : {WeightMemory::Mapped, WeightMemory::HugePageCopy}) {
      LoadOptions opts;
      opts.weights = where;
      auto loaded = Model::load(path, opts);
      ASSERT_FALSE(loaded.ok()) << path;
      EXPECT_NE(loaded.error().message.find(path + ": is " + kind + ", not a regular file"), std::string::npos)
          << loaded.error().message;
    }
    auto read = read_weights_file(path, 0, 16);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, path + ": is " + kind + ", not a regular file");
  }
  fs::remove(fifo);
  fs::remove(dir);
}

}  // namespace
}  // namespace hearth::model
