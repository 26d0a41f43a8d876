// Weight accounting of a mixture-of-experts model (the tiny qwen3moe
// fixture): memory holds every expert, a token reads only the experts it is
// routed to. The expected figures are summed here from the file's tensor
// table (GGUF reader), independently of the model's binding.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/tools/model_info.h>

#include <string>

#include "fixture_logits.h"

namespace hearth::model {
namespace {

struct Expected {
  uint64_t all = 0, experts = 0, active = 0;
};

Expected from_tensor_table(const gguf::GgufFile& file, uint64_t n_expert, uint64_t n_used) {
  Expected e;
  const bool untied = file.find_tensor("output.weight") != nullptr;
  for (const auto& t : file.tensors()) {
    e.all += t.bytes;
    if (t.name.find("_exps.weight") != std::string::npos) {
      e.experts += t.bytes;
      e.active += t.bytes / n_expert * n_used;
    } else if (t.name == "token_embd.weight" && untied) {
      e.active += t.bytes / static_cast<uint64_t>(t.dims[1]);  // one row per token
    } else {
      e.active += t.bytes;
    }
  }
  return e;
}

TEST(ExpertWeights, ModelCountsEveryExpertForMemoryAndTheChosenOnesPerToken) {
  for (const auto& c : hearth::testing::kMoeFixtureCases) {
    const std::string path = hearth::testing::data_path(std::string("models/") + c.model);
    auto file = gguf::GgufFile::open(path);
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.error().message;
    const HParams& hp = (*model)->hparams();
    EXPECT_EQ(hp.n_expert, 8) << c.model;
    EXPECT_EQ(hp.n_expert_used, 2) << c.model;
    EXPECT_EQ(hp.n_ff_exp, 128) << c.model;
    const Expected e = from_tensor_table(*file, 8, 2);
    EXPECT_EQ((*model)->expert_bytes(), e.experts) << c.model;
    EXPECT_EQ((*model)->bytes_per_token(), e.active) << c.model;
    EXPECT_LT((*model)->bytes_per_token(), (*model)->weight_bytes()) << c.model;

    // hearth-cli info's summary: the same experts, all tensors for memory.
    auto s = tools::summarize_model(*file);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->dims.n_expert, 8);
    EXPECT_EQ(s->dims.n_expert_used, 2);
    EXPECT_EQ(s->dims.n_ff_exp, 128);
    EXPECT_EQ(s->expert_bytes, e.experts);
    EXPECT_EQ(s->tensor_bytes, e.all);
    // The summary counts the whole embedding table (it does not know
    // whether the output is tied); everything else as the model does.
    const auto* embd = file->find_tensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    const uint64_t embd_row = embd->bytes / static_cast<uint64_t>(embd->dims[1]);
    const bool untied = file->find_tensor("output.weight") != nullptr;
    EXPECT_EQ(s->active_bytes, e.active + (untied ? embd->bytes - embd_row : 0));
  }
}

}  // namespace
}  // namespace hearth::model
