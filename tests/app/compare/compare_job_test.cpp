// The level comparison job on real fixture models: its figures against the
// reference engine's (tests/data/quality/expected.json), a level made by the
// quantizer and then used, the recommendation rule, and the temporary files a
// cancelled job leaves (none).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compare/compare_job.h"
#include "compare/recommend.h"

namespace {

namespace fs = std::filesystem;
using namespace hearth;
using namespace hearth::compare;

std::string data(const std::string& rel) { return std::string(HEARTH_TEST_DATA_DIR) + "/" + rel; }

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A test's own folder, removed when the test ends: its name carries the
// process id, so folders left behind would pile up run after run.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : dir_(fs::path(::testing::TempDir()) / ("compare-job-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

// Open descriptors of files already unlinked (the base's distribution store).
int deleted_files_open() {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = fs::read_symlink(e.path(), ec);
    if (!ec && target.string().find("(deleted)") != std::string::npos) ++n;
  }
  return n;
}

JobOptions text_options(const fs::path& work) {
  const auto exp = nlohmann::json::parse(slurp(data("quality/expected.json")));
  JobOptions o;
  o.base = {"F32", data("models/tiny-llama-f32.gguf"), std::nullopt, {}};
  o.levels.push_back({"Q8_0", data("models/tiny-llama-q8_0.gguf"), std::nullopt, {}});
  o.levels.push_back({"Q4_K_M", data("models/tiny-llama-q4_k_m.gguf"), std::nullopt, {}});
  o.inputs.text = slurp(data("quality/words.txt"));
  o.n_ctx = exp["ctx"].get<int>();
  o.greedy_tokens = 8;
  o.answer_prompts = 2;
  o.speed = {16, 4, 1};
  o.machine.ram_available_bytes = 64ull << 30;
  o.work_dir = work;
  return o;
}

Result<int64_t> run_to_end(CompareJob& job) {
  int64_t steps = 0;
  for (;;) {
    HEARTH_TRY(const bool more, job.step());
    ++steps;
    if (!more) return steps;
  }
}

TEST(CompareJob, FiguresMatchTheReferenceOnTheFixtureLevels) {
  const ScratchDir scratch_dir("text");
  const fs::path& work = scratch_dir.path();
  auto job = CompareJob::create(text_options(work));
  ASSERT_TRUE(job.ok()) << job.error().message;
  auto steps = run_to_end(**job);
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  EXPECT_TRUE((*job)->done());
  EXPECT_EQ(*steps, (*job)->steps_planned());
  const auto& r = (*job)->result();
  ASSERT_EQ(r.levels.size(), 3u);
  EXPECT_TRUE(r.levels[0].is_base);
  EXPECT_EQ(r.prompts.size(), 2u);
  const auto exp = nlohmann::json::parse(slurp(data("quality/expected.json")));
  for (const auto& c : exp["kl_divergence"]) {
    const std::string model = data(c["model"]);
    const auto it = std::find_if(r.levels.begin(), r.levels.end(), [&](const auto& l) { return l.path == model; });
    ASSERT_NE(it, r.levels.end()) << model;
    SCOPED_TRACE(model);
    const double kld = c["kld_mean"];
    const bool q8 = model.find("q8_0") != std::string::npos;
    // The tolerances of issue 20: 2 % of mean KLD (a floor for Q8_0's tiny
    // figure, whose 16-bit base rows resolve ~1e-5), 1 point of top-1.
    EXPECT_NEAR(it->kld_mean, kld, std::max(0.02 * kld, q8 ? 2e-5 : 0.0));
    EXPECT_NEAR(100.0 * it->top1, c["top1_percent"].get<double>(), 1.0);
    EXPECT_GT(it->kld_p99, it->kld_mean);
    EXPECT_GT(it->pp_tps, 0.0);
    EXPECT_GT(it->tg_tps, 0.0);
    EXPECT_EQ(it->file_bytes, fs::file_size(model));
    EXPECT_GT(it->memory_bytes, it->file_bytes);  // plus the KV cache and scratch
    EXPECT_EQ(it->answers.size(), 2u);
    EXPECT_GE(it->greedy_same, 0.0);
    EXPECT_LE(it->greedy_same, 8.0);
  }
  // The smallest level within the floor that fits: with a top-1 floor of
  // 90 %, Q8_0 (95.5 % in the reference) qualifies and Q4_K_M (64.5 %) does not.
  settings::QualityFloorSettings floor;
  floor.top1_percent = 90;
  const auto pick = recommend_level(r.levels, floor);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(r.levels[*pick].label, "Q8_0");
  floor.top1_percent = 60;  // now Q4_K_M qualifies, and it is the smallest
  EXPECT_EQ(r.levels[*recommend_level(r.levels, floor)].label, "Q4_K_M");
  // Nothing fits a machine without memory.
  auto starved = r.levels;
  for (auto& l : starved) l.fit = models::FitKind::NoFit;
  EXPECT_FALSE(recommend_level(starved, floor).has_value());
  job->reset();
  EXPECT_TRUE(fs::is_empty(work));
}

TEST(CompareJob, AMadeLevelIsQuantizedKeptAndCompared) {
  const ScratchDir scratch_dir("make");
  const fs::path& work = scratch_dir.path();
  const fs::path models = work / "models";
  fs::create_directories(models);
  JobOptions o = text_options(work / "tmp");
  const fs::path made = models / "tiny-llama-Q4_0.gguf";
  o.levels = {{"Q4_0", made, hearth::tools::QuantTarget::Q4_0, data("models/tiny-llama-f32.gguf")}};
  o.inputs.text.reset();
  o.inputs.prompts = {"Once upon a time", "The boy saw his friend"};
  auto job = CompareJob::create(o);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ((*job)->activity(), "making Q4_0");
  ASSERT_TRUE((*job)->step().ok());
  EXPECT_TRUE(fs::is_regular_file(made));  // made first, kept beside the others
  auto steps = run_to_end(**job);
  ASSERT_TRUE(steps.ok()) << steps.error().message;
  // The plan was known from the start: 1 make + (load, 2 answers, 2 segments, timing) x 2.
  EXPECT_EQ((*job)->steps_done(), 13);
  EXPECT_EQ((*job)->steps_planned(), 13);
  const auto& r = (*job)->result();
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_TRUE(r.levels[1].made);
  EXPECT_EQ(r.levels[1].path, made.string());
  EXPECT_EQ(r.levels[1].file_bytes, fs::file_size(made));
  // Q4_0 of these weights: a quarter-size file that still mostly agrees.
  EXPECT_LT(r.levels[1].file_bytes, r.levels[0].file_bytes / 3);
  EXPECT_GT(r.levels[1].kld_mean, 0.0);
  EXPECT_GT(r.levels[1].top1, 0.3);
  EXPECT_EQ(r.levels[1].answers.size(), 2u);
  EXPECT_EQ(r.prompts[0], "Once upon a time");
  job->reset();
  EXPECT_TRUE(fs::is_regular_file(made));
}

TEST(CompareJob, CancellingRemovesTheTemporaryFiles) {
  const ScratchDir scratch_dir("cancel");
  const fs::path& work = scratch_dir.path();
  const int deleted_before = deleted_files_open();
  auto job = CompareJob::create(text_options(work));
  ASSERT_TRUE(job.ok());
  // Load the base and score some windows: the distribution store exists.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*job)->step().ok());
  EXPECT_EQ(deleted_files_open(), deleted_before + 1);
  EXPECT_FALSE(fs::is_empty(work));  // the job's folder
  job->reset();  // what cancelling does
  EXPECT_EQ(deleted_files_open(), deleted_before);
  EXPECT_TRUE(fs::is_empty(work));
}

TEST(CompareJob, RefusesBadChoices) {
  const ScratchDir scratch_dir("bad");
  const fs::path& work = scratch_dir.path();
  JobOptions o = text_options(work);
  o.levels.clear();
  EXPECT_FALSE(CompareJob::create(o).ok());  // one level
  o = text_options(work);
  o.levels.push_back(o.levels[0]);
  o.levels.push_back(o.levels[0]);
  EXPECT_FALSE(CompareJob::create(o).ok());  // five levels
  o = text_options(work);
  o.levels[0].path = work / "missing.gguf";
  const auto missing = CompareJob::create(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("missing.gguf"), std::string::npos);
  EXPECT_FALSE(parse_prompt_file("p.jsonl", "{\"x\": 1}\n").ok());
  const auto set = parse_prompt_file("p.jsonl", "{\"prompt\": \"a\", \"category\": \"code\"}\n\n\"b\"\n");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->prompts.size(), 2u);
  EXPECT_EQ(set->categories[0], "code");
  EXPECT_TRUE(parse_prompt_file("notes.txt", "some text").value().text.has_value());
}

TEST(CompareJob, TheBaseIsTheHighestLevel) {
  const std::vector<LevelSpec> levels = {{"Q4_K_M", {}, {}, {}}, {"Q8_0", {}, {}, {}}, {"F16", {}, {}, {}}};
  EXPECT_EQ(highest_level(levels), 2u);
  EXPECT_EQ(level_rank("bf16"), level_rank("F16"));
  EXPECT_GT(level_rank("Q8_0"), level_rank("Q6_K"));
}

}  // namespace
