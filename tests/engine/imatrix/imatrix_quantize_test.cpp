// Quantizing with an importance matrix against quantizing without, on the
// bundled story model and the dense Llama F32 fixtures: the matrix is collected on the
// default calibration text (resources/calibration/default.txt), and
//  - every tensor's importance-weighted error sum_c imp[c] sum_r (w - q)^2
//    (q dequantized with the scalar reference) is lower with it;
//  - the mean KL divergence from the F32 model on a different text
//    (tests/data/quality/story.txt, windows of 128) is lower with it for
//    Q2_K, Q3_K_M, Q4_K_M and IQ4_XS. The margins are printed.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/imatrix/collector.h>
#include <hearth/engine/quality/kl_divergence.h>
#include <hearth/engine/quant/reference.h>
#include <hearth/engine/quant/weighted.h>
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tools/quantize_model.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../model/fixture_logits.h"

namespace hearth::imatrix {
namespace {

namespace fs = std::filesystem;
using hearth::testing::data_path;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Case {
  const char* model;  // under tests/data/models
  const char* name;
};

class ImatrixQuantize : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hearth-imatrix-q-" + std::string(GetParam().name) + "-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    source_ = data_path(std::string("models/") + GetParam().model);
    auto model = model::Model::load(source_);
    ASSERT_TRUE(model.ok()) << model.error().message;
    CollectOptions options;
    options.n_ctx = 128;
    options.threads = 1;
    options.dataset = "default.txt";
    auto m = collect_importance(**model, slurp(data_path("../../resources/calibration/default.txt")), options);
    ASSERT_TRUE(m.ok()) << m.error().message;
    importance_ = std::make_shared<tools::QuantImportance>();
    importance_->weights = quant_weights(*m);
    importance_->file = "default.imatrix";
    importance_->chunks = m->chunk_count;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string quantize(tools::QuantTarget target, bool with_importance) {
    const auto out = (dir_ / (std::string(tools::to_string(target)) + (with_importance ? "-im" : "") + ".gguf")).string();
    tools::QuantizeOptions options;
    options.target = target;
    options.threads = 1;
    options.error_report = tools::ErrorReport::Skip;
    if (with_importance) options.importance = importance_;
    auto r = tools::quantize_model(source_, out, options);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return out;
  }

  fs::path dir_;
  std::string source_;
  std::shared_ptr<tools::QuantImportance> importance_;
};

// sum_c imp[c] * sum_r (w[r][c] - q[r][c])^2 over a 2-D tensor.
double weighted_error(const gguf::GgufFile& src, const gguf::GgufFile& q, const gguf::TensorInfo& t,
                      const std::vector<float>& imp) {
  const auto* qt = q.find_tensor(t.name);
  const int64_t cols = t.row_length();
  std::vector<float> back(static_cast<size_t>(cols));
  const auto* w = reinterpret_cast<const float*>(src.tensor_data(t).data());
  const uint64_t rb = *row_bytes(qt->type, cols);
  double e = 0;
  for (int64_t r = 0; r < t.rows(); ++r) {
    EXPECT_TRUE(quant::dequantize_row(qt->type, q.tensor_data(*qt).data() + r * rb, back.data(), cols));
    for (int64_t c = 0; c < cols; ++c) {
      const double d = back[static_cast<size_t>(c)] - w[r * cols + c];
      e += imp[static_cast<size_t>(c)] * d * d;
    }
  }
  return e;
}

TEST_P(ImatrixQuantize, EveryTensorHasALowerImportanceWeightedError) {
  auto src = gguf::GgufFile::open(source_);
  ASSERT_TRUE(src.ok());
  for (const auto target : {tools::QuantTarget::Q2_K, tools::QuantTarget::Q4_K_M}) {
    auto plain = gguf::GgufFile::open(quantize(target, false));
    auto weighted = gguf::GgufFile::open(quantize(target, true));
    ASSERT_TRUE(plain.ok() && weighted.ok());
    int compared = 0;
    for (const auto& t : src->tensors()) {
      const auto it = importance_->weights.find(t.name);
      if (it == importance_->weights.end()) continue;
      const auto* a = plain->find_tensor(t.name);
      const auto* b = weighted->find_tensor(t.name);
      ASSERT_TRUE(a && b);
      if (a->type != b->type || !quant::takes_importance(a->type)) continue;
      const double ea = weighted_error(*src, *plain, t, it->second);
      const double eb = weighted_error(*src, *weighted, t, it->second);
      EXPECT_LT(eb, ea) << t.name << " " << traits(a->type).name;
      ++compared;
    }
    EXPECT_GT(compared, 4) << tools::to_string(target);
    // The output records where the weights came from, as the reference does.
    EXPECT_EQ(*weighted->get_string("quantize.imatrix.file"), "default.imatrix");
  }
}

TEST_P(ImatrixQuantize, MeanKlDivergenceFromF32IsLowerWithImportance) {
  auto backend = backend::make_cpu_backend({1});
  auto base = model::Model::load(source_);
  ASSERT_TRUE(base.ok());
  auto tok = tokenizer::Tokenizer::from_gguf((*base)->file());
  ASSERT_TRUE(tok.ok());
  auto windows = quality::text_windows(quality::tokenize_text(*tok, slurp(data_path("quality/story.txt"))), 128);
  ASSERT_TRUE(windows.ok());
  auto record = quality::record_base(**base, *backend, *windows);
  ASSERT_TRUE(record.ok()) << record.error().message;
  base->reset();
  const auto kld = [&](const std::string& path) {
    auto m = model::Model::load(path);
    EXPECT_TRUE(m.ok());
    auto r = quality::compare_with_base(**m, *backend, *record, *windows);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->kld_mean : 0.0;
  };
  for (const auto target : {tools::QuantTarget::Q2_K, tools::QuantTarget::Q3_K_M, tools::QuantTarget::Q4_K_M,
                            tools::QuantTarget::IQ4_XS}) {
    const double plain = kld(quantize(target, false));
    const double weighted = kld(quantize(target, true));
    std::printf("%-16s %-7s mean KLD without %.5f, with importance %.5f: %.1f%% lower\n", GetParam().name,
                std::string(tools::to_string(target)).c_str(), plain, weighted, 100.0 * (1.0 - weighted / plain));
    EXPECT_LT(weighted, plain) << tools::to_string(target);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ImatrixQuantize,
                         ::testing::Values(Case{"stories260K.gguf", "stories260K"},
                                           Case{"tiny-llama-f32.gguf", "tiny_llama_f32"},
                                           Case{"tiny-llama31-f32.gguf", "tiny_llama31_f32"}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace hearth::imatrix
