// hearth-cli info and quantize: numbers against independent computations
// (the fixture's documented shapes, the KV formula by hand, sums over the
// reader's tensor infos) and the exit-code contract.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli/verbs.h"

namespace hearth::cli {
namespace {

namespace fs = std::filesystem;

std::string model_path(const std::string& name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

nlohmann::json info_json(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  const int rc = run_info(args);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, kExitOk) << out;
  return nlohmann::json::parse(out);
}

TEST(InfoVerb, TinyLlamaNumbers) {
  const std::string path = model_path("tiny-llama-q8_0.gguf");
  const auto j = info_json({path, "--ctx", "300", "--json"});
  auto file = gguf::GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  uint64_t params = 0;
  std::map<std::string, uint64_t> by_type;
  for (const auto& t : file->tensors()) {
    params += static_cast<uint64_t>(t.elements());
    by_type[std::string(traits(t.type).name)] += t.bytes;
  }
  EXPECT_EQ(j.at("architecture"), "llama");
  EXPECT_EQ(j.at("parameters").get<uint64_t>(), params);
  EXPECT_EQ(j.at("file_bytes").get<uint64_t>(), fs::file_size(path));
  EXPECT_EQ(j.at("context_length"), 512);
  EXPECT_EQ(j.at("n_layer"), 2);
  EXPECT_EQ(j.at("n_head"), 4);
  EXPECT_EQ(j.at("n_head_kv"), 2);
  EXPECT_EQ(j.at("head_dim"), 64);
  EXPECT_EQ(j.at("chat_template"), true);
  for (const auto& [type, bytes] : by_type) EXPECT_EQ(j.at("tensor_types").at(type).get<uint64_t>(), bytes) << type;
  const auto& m = j.at("memory");
  // 2 (K, V) * 2 layers * 2 KV heads * 64 * n_ctx * 2 bytes, n_ctx 300 rounded up to 320 (blocks of 32).
  EXPECT_EQ(m.at("kv_bytes").get<uint64_t>(), 2ull * 2 * 2 * 64 * 320 * 2);
  EXPECT_EQ(m.at("n_ctx"), 300);
  EXPECT_EQ(m.at("kv_type"), "f16");
  EXPECT_EQ(m.at("weights_bytes").get<uint64_t>(), fs::file_size(path));
  EXPECT_EQ(m.at("total_bytes").get<uint64_t>(), m.at("weights_bytes").get<uint64_t>() +
                                                    m.at("kv_bytes").get<uint64_t>() +
                                                    m.at("scratch_bytes").get<uint64_t>());
  // Q8_0 cache: 34 bytes per 32 values.
  const auto q = info_json({path, "--ctx", "320", "--kv-type", "q8_0", "--json"});
  EXPECT_EQ(q.at("memory").at("kv_bytes").get<uint64_t>(), 2ull * 2 * 2 * (64 / 32 * 34) * 320);
  EXPECT_EQ(q.at("memory").at("kv_type"), "q8_0");
}

TEST(InfoVerb, ExitCodes) {
  EXPECT_EQ(run_info({}), kExitUsage);
  EXPECT_EQ(run_info({model_path("tiny-llama-q8_0.gguf"), "--kv-type", "q4_0"}), kExitUsage);
  const fs::path bad = fs::temp_directory_path() / "hearth_info_test_truncated.gguf";
  {
    std::ofstream out(bad, std::ios::binary);
    out << "GGUF\x03";
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_info({bad.string()}), kExitBadInput);
  const std::string err = ::testing::internal::GetCapturedStderr();
  fs::remove(bad);
  EXPECT_NE(err.find("hearth_info_test_truncated.gguf"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(QuantizeVerb, WritesLoadableFileAndReportsEveryTensor) {
  const fs::path out = fs::temp_directory_path() / "hearth_quantize_verb_test.gguf";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_quantize({model_path("tiny-llama-f32.gguf"), out.string(), "q4_0", "--threads", "2"}), kExitOk);
  const std::string err = ::testing::internal::GetCapturedStderr();
  auto file = gguf::GgufFile::open(out);
  ASSERT_TRUE(file.ok());
  for (const auto& t : file->tensors()) EXPECT_NE(err.find(t.name), std::string::npos) << t.name;
  EXPECT_NE(err.find("rel_err"), std::string::npos);
  fs::remove(out);
  EXPECT_EQ(run_quantize({model_path("tiny-llama-f32.gguf"), out.string()}), kExitUsage);
  EXPECT_EQ(run_quantize({model_path("tiny-llama-f32.gguf"), out.string(), "Q4_K"}), kExitUsage);
  EXPECT_EQ(run_quantize({model_path("tiny-llama-q8_0.gguf"), out.string(), "Q4_0"}), kExitBadInput);
  fs::remove(out);
}

}  // namespace
}  // namespace hearth::cli
