// hearth-cli gen-model with the fixtures' Gemma 3 and SmolLM3 shapes: the
// file it writes has the tensors (names, shapes, Q4_K_M types) and shape keys
// of the reference engine's own fixture of that family, and loads.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/model/model.h>

#include <map>
#include <string>

#include "cli/verbs.h"

namespace hearth::cli {
namespace {

std::string model_path(const std::string& name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

struct GenCase {
  const char* shape;
  const char* fixture;  // the reference's file of the same shape
  const char* type = "Q4_K_M";
};

class GenModelVerb : public ::testing::TestWithParam<GenCase> {};

TEST_P(GenModelVerb, WritesTheReferenceFixturesTensorsAndKeys) {
  const GenCase& c = GetParam();
  const std::string ref_path = model_path(c.fixture);
  const std::string out = ::testing::TempDir() + "hearth-gen-" + c.shape + ".gguf";
  ASSERT_EQ(run_gen_model({"--shape", c.shape, "--vocab", ref_path, "--type", c.type, "--out", out}), kExitOk);
  auto ref = gguf::GgufFile::open(ref_path);
  auto got = gguf::GgufFile::open(out);
  ASSERT_TRUE(ref.ok() && got.ok());

  std::map<std::string, const gguf::TensorInfo*> ref_tensors;
  for (const auto& t : ref->tensors()) ref_tensors[t.name] = &t;
  EXPECT_EQ(got->tensors().size(), ref->tensors().size());
  for (const auto& t : got->tensors()) {
    const auto it = ref_tensors.find(t.name);
    ASSERT_NE(it, ref_tensors.end()) << t.name << " is not in the reference file";
    EXPECT_EQ(t.dims, it->second->dims) << t.name;
    EXPECT_EQ(t.type, it->second->type) << t.name << ": " << traits(t.type).name << " vs "
                                        << traits(it->second->type).name;
  }
  // Every shape key of the reference (the architecture's own keys) with the same value.
  const std::string arch = *ref->architecture();
  for (const auto& kv : ref->metadata()) {
    if (kv.key.rfind(arch + ".", 0) != 0) continue;
    const gguf::Value* v = got->find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    if (auto u = ref->get_uint(kv.key); u.ok()) {
      EXPECT_EQ(*got->get_uint(kv.key), *u) << kv.key;
    } else if (auto f = ref->get_float(kv.key); f.ok()) {
      EXPECT_FLOAT_EQ(static_cast<float>(*got->get_float(kv.key)), static_cast<float>(*f)) << kv.key;
    } else {
      EXPECT_EQ(*got->get_string(kv.key), *ref->get_string(kv.key)) << kv.key;
    }
  }
  auto model = model::Model::load(out);
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto ref_model = model::Model::load(ref_path);
  ASSERT_TRUE(ref_model.ok()) << ref_model.error().message;
  EXPECT_EQ((*model)->layer_windows(), (*ref_model)->layer_windows());
  EXPECT_EQ((*model)->hparams().head_dim, (*ref_model)->hparams().head_dim);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GenModelVerb,
                         ::testing::Values(GenCase{"tiny-gemma3", "tiny-gemma3-q4_k_m.gguf"},
                                           GenCase{"tiny-smollm3", "tiny-smollm3-q4_k_m.gguf"},
                                           // Q8_0 with MXFP4 experts: the reference's MXFP4_MOE file.
                                           GenCase{"tiny-gpt-oss", "tiny-gpt-oss-mxfp4_moe.gguf", "Q8_0"}),
                         [](const ::testing::TestParamInfo<GenCase>& param_info) {
                           std::string n = param_info.param.shape;
                           for (char& ch : n) {
                             if (ch == '-') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace hearth::cli
