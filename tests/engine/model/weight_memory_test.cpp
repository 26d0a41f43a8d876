// Where the weights live (weight_memory.h): the huge-page buffer, reading a
// file range into it, the machine check behind "auto", and every fixture
// model loaded both ways — every weight's bytes equal the file's (read
// through the GGUF reader), the copy leaves nothing pointing into the
// mapping, and both give the reference engine's logits.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/model/weight_memory.h>
#include <hearth/engine/quant/interleave.h>

#include <fstream>
#include <numeric>
#include <random>

#include "fixture_logits.h"
#include "weight_checks.h"

namespace hearth::model {
namespace {

using hearth::testing::data_path;

constexpr uint64_t kHugePage = uint64_t{2} << 20;

std::string write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(WeightMemory, ParsesTheFlagValues) {
  EXPECT_EQ(*parse_weight_memory("auto"), WeightMemory::Auto);
  EXPECT_EQ(*parse_weight_memory("mapped"), WeightMemory::Mapped);
  EXPECT_EQ(*parse_weight_memory("copy"), WeightMemory::HugePageCopy);
  for (auto m : {WeightMemory::Auto, WeightMemory::Mapped, WeightMemory::HugePageCopy}) {
    EXPECT_EQ(*parse_weight_memory(to_string(m)), m);
  }
  auto bad = parse_weight_memory("hugepages");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(bad.error().message, "weight memory 'hugepages' is not one of auto, mapped, copy");
}

TEST(WeightMemory, AutoChoosesACopyOnlyWhenTheKernelHasHugePages) {
  const auto thp = [](const std::string& line) {
    const std::string path = ::testing::TempDir() + "hearth-thp-enabled";
    std::ofstream(path) << line << "\n";
    return transparent_huge_pages_available(path);
  };
  EXPECT_TRUE(thp("always [madvise] never"));
  EXPECT_TRUE(thp("[always] madvise never"));
  EXPECT_FALSE(thp("always madvise [never]"));
  EXPECT_FALSE(transparent_huge_pages_available(::testing::TempDir() + "no-such-thp-file"));
  EXPECT_EQ(resolve(WeightMemory::Mapped), WeightMemory::Mapped);
  EXPECT_EQ(resolve(WeightMemory::HugePageCopy), WeightMemory::HugePageCopy);
  EXPECT_EQ(resolve(WeightMemory::Auto),
            transparent_huge_pages_available() ? WeightMemory::HugePageCopy : WeightMemory::Mapped);
}

TEST(WeightMemory, AutoKeepsTheMappingWhenTheCpuComputesNothing) {
  EXPECT_EQ(weights_for(WeightMemory::Auto, CpuComputes::No), WeightMemory::Mapped);
  EXPECT_EQ(weights_for(WeightMemory::Auto, CpuComputes::Yes), WeightMemory::Auto);
  for (auto asked : {WeightMemory::Mapped, WeightMemory::HugePageCopy}) {
    EXPECT_EQ(weights_for(asked, CpuComputes::No), asked);
    EXPECT_EQ(weights_for(asked, CpuComputes::Yes), asked);
  }
}

TEST(HugePageBuffer, StartsOnAHugePageAndIsZeroed) {
  for (uint64_t size : {uint64_t{1}, uint64_t{4096}, kHugePage, kHugePage + 1, 3 * kHugePage}) {
    auto buf = HugePageBuffer::allocate(size);
    ASSERT_TRUE(buf.ok()) << buf.error().message;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf->data()) % kHugePage, 0u) << size;
    EXPECT_EQ(buf->size(), size);
    const uint8_t* p = buf->data();
    EXPECT_TRUE(std::all_of(p, p + size, [](uint8_t b) { return b == 0; })) << size;
    buf->data()[size - 1] = 7;  // writable to the last byte
  }
  HugePageBuffer moved;
  {
    auto buf = HugePageBuffer::allocate(100);
    ASSERT_TRUE(buf.ok());
    moved = std::move(buf).value();
  }
  EXPECT_EQ(moved.size(), 100u);
  moved.data()[99] = 1;
}

TEST(HugePageBuffer, ReadsAFileRangeExactly) {
  std::vector<uint8_t> bytes(5 * (uint64_t{1} << 20) + 123);
  std::mt19937 rng(7);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  const std::string path = write_temp("hearth-weights-range.bin", bytes);
  struct Range {
    uint64_t offset, size;
  };
  for (Range r : {Range{0, bytes.size()}, Range{1, 1000}, Range{4096 + 3, bytes.size() - 4099}, Range{bytes.size() - 1, 1}}) {
    std::vector<uint64_t> progress;
    auto buf = read_weights_file(path, r.offset, r.size, [&](uint64_t done) { progress.push_back(done); });
    ASSERT_TRUE(buf.ok()) << buf.error().message;
    ASSERT_EQ(buf->size(), r.size);
    EXPECT_EQ(std::memcmp(buf->data(), bytes.data() + r.offset, r.size), 0) << r.offset << "+" << r.size;
    ASSERT_FALSE(progress.empty());
    EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
    EXPECT_EQ(progress.back(), r.size);
  }
}

TEST(HugePageBuffer, AFileThatEndsEarlyOrIsMissingIsAnIoErrorNamingIt) {
  const std::string path = write_temp("hearth-weights-short.bin", std::vector<uint8_t>(1000, 1));
  auto short_read = read_weights_file(path, 100, 2000);
  ASSERT_FALSE(short_read.ok());
  EXPECT_EQ(short_read.error().code, ErrorCode::Io);
  EXPECT_EQ(short_read.error().message, path + ": the file ends at byte 1000, the weights reach byte 2100");
  const std::string missing = ::testing::TempDir() + "hearth-no-such-weights.gguf";
  auto none = read_weights_file(missing, 0, 10);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::Io);
  EXPECT_NE(none.error().message.find(missing + ": cannot open"), std::string::npos) << none.error().message;
}

class FixtureWeights : public ::testing::TestWithParam<hearth::testing::FixtureCase> {};

std::vector<float> logits_of(const Model& m, const std::vector<int32_t>& ids) {
  auto be = backend::make_cpu_backend({2});
  auto cache = kv::KvCache::create(*be, m.kv_config(static_cast<int64_t>(ids.size()), DType::F16));
  EXPECT_TRUE(cache.ok());
  if (!cache.ok()) return {};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> logits;
  auto st = m.forward(*be, **cache, Batch{ids, pos}, LogitsRows::All, logits);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return logits;
}

TEST_P(FixtureWeights, BothPlacesHoldTheFilesBytesAndGiveTheReferenceLogits) {
  const auto& c = GetParam();
  const std::string path = data_path(std::string("models/") + c.model);
  const auto ids = hearth::testing::read_ids(data_path(std::string("models/") + c.tokens));
  const auto ref = hearth::testing::read_f32(path + ".logits.f32");
  for (WeightMemory where : {WeightMemory::Mapped, WeightMemory::HugePageCopy}) {
    LoadOptions opts;
    opts.weights = where;
    std::vector<LoadProgress> progress;
    opts.progress = [&](const LoadProgress& p) { progress.push_back(p); };
    auto model = Model::load(path, opts);
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_GT(hearth::testing::expect_weights_hold_the_files_bytes(**model, where), 0u);
    ASSERT_FALSE(progress.empty());
    EXPECT_EQ(progress.back().done_bytes, progress.back().total_bytes);
    EXPECT_EQ(progress.back().total_bytes, (*model)->weight_bytes());
    const auto got = logits_of(**model, ids);
    ASSERT_EQ(got.size(), ref.size());
    const auto a = hearth::testing::compare_logits(got, ref, 512);
    EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine) << c.model << " " << to_string(where);
    EXPECT_GE(a.top1, c.min_top1) << c.model << " " << to_string(where);
  }
}

// With copied weights the products are interleaved where the CPU has the
// kernels for their type in that layout (and only there), never in a mapped
// file (the logits through them are FixtureWeights' check); `type` must be
// among them.
void expect_interleaved_only_where_it_pays(const std::string& path, DType type) {
  const quant::KernelTable best = quant::select_kernels(quant::detect_cpu_features());
  const auto has_kernels = [&](const backend::Tensor* t) {
    return best.get(t->type).interleaved.decode.rows != nullptr && quant::can_interleave(t->type, t->ne[1], t->ne[0]);
  };
  struct Case {
    WeightMemory where;
    quant::KernelLevel cap;
    bool interleaved;
  };
  for (const Case c : {Case{WeightMemory::HugePageCopy, quant::KernelLevel::Avx512, true},
                       Case{WeightMemory::HugePageCopy, quant::KernelLevel::Scalar, false},
                       Case{WeightMemory::Mapped, quant::KernelLevel::Avx512, false}}) {
    LoadOptions opts;
    opts.weights = c.where;
    opts.cpu_kernels = c.cap;
    auto model = Model::load(path, opts);
    ASSERT_TRUE(model.ok()) << model.error().message;
    int of_type = 0;
    for (const LayerWeights& l : (*model)->weights().layers) {
      for (const backend::Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.w_gate, l.w_up, l.w_down}) {
        of_type += t->type == type;
        const auto want = c.interleaved && has_kernels(t) ? backend::WeightLayout::Interleaved16
                                                          : backend::WeightLayout::Plain;
        EXPECT_EQ(t->layout, want) << t->name << " " << to_string(c.where) << " cap " << to_string(c.cap);
      }
      EXPECT_EQ(l.attn_norm->layout, backend::WeightLayout::Plain) << "norms are not interleaved";
    }
    EXPECT_GT(hearth::testing::expect_weights_hold_the_files_bytes(**model, c.where), 0u);
    EXPECT_GT(of_type, 0) << path << " has no " << traits(type).name << " products";
  }
}

TEST(InterleavedWeights, ProductsOnlyInTheCopyAndOnlyWithTheirKernels) {
  expect_interleaved_only_where_it_pays(data_path("models/tiny-llama-q4_0.gguf"), DType::Q4_0);
  expect_interleaved_only_where_it_pays(data_path("models/tiny-llama-q8_0.gguf"), DType::Q8_0);
  // Q4_K_M: Q4_K and Q6_K, and Q5_0 for the products of widths that are
  // not whole 256-value blocks.
  expect_interleaved_only_where_it_pays(data_path("models/tiny-gemma3-q4_k_m.gguf"), DType::Q5_0);
  expect_interleaved_only_where_it_pays(data_path("models/tiny-llama-q4_k_m.gguf"), DType::Q4_K);
}

std::string weights_case_name(const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
  std::string n = param_info.param.model;
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Models, FixtureWeights, ::testing::ValuesIn(hearth::testing::kFixtureCases), weights_case_name);
INSTANTIATE_TEST_SUITE_P(MoeModels, FixtureWeights, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         weights_case_name);

}  // namespace
}  // namespace hearth::model
