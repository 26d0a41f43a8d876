// The level comparison behind the picker's "Compare levels": what each quant
// level of a model costs (memory, speed) and how far it drifts from the best
// level available (KL divergence, top-1 agreement, same greedy answer),
// computed one small step at a time so the engine thread can run a chat
// reply between two steps.
//
// One model is in memory at a time: the base runs first and leaves its
// token distributions in a temporary store (quality::BaseLogProbs), then
// each level is loaded, measured and freed. Speed comes from
// measure::measure_speed, the measurement `hearth-cli bench` runs, so the
// figures equal bench's. Plain C++ (no Qt): the app runs it on the engine
// thread, tests drive it step by step.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quality/kl_divergence.h>
#include <hearth/engine/quality/segments.h>
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/tools/quant_mix.h>
#include <hearth/models/memory_fit.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/prompt_set.h"
#include "measure/speed.h"

namespace hearth::compare {

// One level to compare. A level Hearth makes has `make` set: the job
// quantizes `make_from` (a higher level it has) into `path` first, through a
// temporary file renamed when complete, and keeps the file for later use.
struct LevelSpec {
  std::string label;  // "Q4_K_M"
  std::filesystem::path path;
  std::optional<tools::QuantTarget> make;
  std::filesystem::path make_from;
};

struct JobOptions {
  LevelSpec base;                  // the highest level (highest_level())
  std::vector<LevelSpec> levels;   // compared with the base (1-3 of them)
  PromptSet inputs;
  int32_t n_ctx = 128;             // text windows (the reference's perplexity method)
  int32_t greedy_tokens = 32;      // tokens of each greedy answer
  int32_t answer_prompts = 3;      // prompts answered with text mode (lines of the text)
  measure::SpeedOptions speed{64, 16, 1};  // short: the app's figure, bench's code
  runtime::BackendPreference backend = runtime::BackendPreference::Cpu;
  int threads = 2;
  DType kv_type = DType::F16;
  // The picker's fit: the user's context and KV precision, the machine.
  models::KvSettings fit_kv;
  models::MachineBudget machine;
  // Where partial files go while a level is made (removed with the job).
  std::filesystem::path work_dir;
  // Made levels protect their most important weights: an importance matrix
  // collected over this text (the shipped calibration text) on the level they
  // are made from weights the quantizer's block searches. Empty: plain.
  std::string calibration_text;
  std::string calibration_name = "calibration/default.txt";  // recorded in the made file
};

struct LevelFigures {
  std::string label;
  std::string path;
  bool made = false;               // quantized by this job
  bool is_base = false;
  uint64_t file_bytes = 0;
  uint64_t memory_bytes = 0;       // weights + KV + scratch at the user's context (the picker's estimate)
  models::FitKind fit = models::FitKind::NoFit;
  double pp_tps = 0, tg_tps = 0;   // measure_speed means
  double kld_mean = 0, kld_p99 = 0;
  double top1 = 1;                 // fraction of positions whose most likely token equals the base's
  double greedy_same = 0;          // mean leading answer tokens equal to the base's
  int64_t positions = 0;
  std::vector<std::string> answers;  // greedy answers, one per answered prompt
};

struct JobResult {
  std::vector<std::string> prompts;  // the answered prompts
  std::vector<LevelFigures> levels;  // the base first, then the levels in order
};

// Which level is the base: F32, then F16/BF16, then Q8_0, then the most bits
// per weight by the file's general.file_type; ties keep the first. Index into
// `levels`; nullopt when empty.
std::optional<size_t> highest_level(const std::vector<LevelSpec>& levels);

class CompareJob {
 public:
  // Checks the options (2-4 levels in all, files present or makeable, a
  // non-empty prompt set); nothing is loaded yet.
  static Result<std::unique_ptr<CompareJob>> create(JobOptions options);
  ~CompareJob();
  CompareJob(const CompareJob&) = delete;
  CompareJob& operator=(const CompareJob&) = delete;

  // Runs the next step (a level made, a model loaded, one segment scored,
  // one answer, one speed run); false once everything is done. A failed step
  // ends the job.
  Result<bool> step();
  bool done() const;
  // Steps done and planned (planned is known once the base is tokenized; it
  // only grows by steps whose number depends on the text).
  int64_t steps_done() const { return steps_done_; }
  int64_t steps_planned() const;
  // What the current step does, for the progress line ("scoring Q4_K_M").
  std::string activity() const;
  const JobResult& result() const { return result_; }

 private:
  struct State;
  explicit CompareJob(JobOptions options);
  // Tokenizes the inputs with the base's tokenizer: the text's windows and
  // answered prompts, or the prompts.
  Status prepare_inputs();
  // One segment through the current model: the base's rows are stored, a
  // level's are compared with them.
  Status score_segment(const quality::Segment& segment);
  // The current level's figures from the sums, appended to the result.
  void finish_level();
  JobOptions options_;
  std::unique_ptr<State> state_;
  JobResult result_;
  int64_t steps_done_ = 0;
};

}  // namespace hearth::compare
