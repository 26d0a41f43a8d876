#include "compare/compare_job.h"

#include <fmt/format.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/quality/greedy.h>
#include <hearth/engine/quality/log_probs.h>
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tools/model_info.h>
#include <hearth/engine/imatrix/collector.h>
#include <hearth/engine/tools/quantize_model.h>

#include <algorithm>
#include <map>
#include <cstdlib>
#include <system_error>

namespace hearth::compare {
namespace {

namespace fs = std::filesystem;

// Tokens of the text that start each answered prompt in text mode.
constexpr size_t kTextPromptTokens = 16;
// A prompt longer than this is refused: the comparison is about short answers.
constexpr size_t kMaxPromptTokens = 1024;

enum class Phase { Make, Load, Answer, Score, Speed, Done };

struct Loaded {
  std::unique_ptr<backend::Backend> backend;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
};

// The picker's shape for a model read from its header (models::compute_fit's input).
models::ModelShape shape_of(const kv::ModelDims& d) {
  models::ModelShape s;
  s.n_layer = static_cast<uint32_t>(d.n_layer);
  s.n_head = static_cast<uint32_t>(d.n_head);
  s.n_head_kv = static_cast<uint32_t>(d.n_head_kv);
  s.head_dim = static_cast<uint32_t>(d.head_dim);
  s.n_embd = static_cast<uint32_t>(d.n_embd);
  s.n_ff = static_cast<uint32_t>(d.n_ff);
  s.n_vocab = static_cast<uint32_t>(d.n_vocab);
  s.projections = d.projections;
  s.layer_windows = d.layer_windows;
  s.n_expert = static_cast<uint32_t>(d.n_expert);
  s.n_expert_used = static_cast<uint32_t>(d.n_expert_used);
  s.n_ff_exp = static_cast<uint32_t>(d.n_ff_exp);
  s.expert_biases = d.expert_biases;
  return s;
}

}  // namespace

struct CompareJob::State {
  Phase phase = Phase::Make;
  size_t make_index = 0;  // next level to make
  // Importance matrices by the file they were collected on: levels made from
  // the same source share one collection.
  std::map<fs::path, std::shared_ptr<const tools::QuantImportance>> importance;
  size_t level = 0;       // 0: the base, i: options.levels[i - 1]
  size_t item = 0;        // next prompt or segment of the phase
  fs::path work;          // this job's folder for partial files
  Loaded current;
  std::vector<std::string> vocab;  // the base's token texts: every level must share them
  std::vector<quality::Segment> segments;
  std::vector<std::vector<int32_t>> prompts;        // answered prompts, tokenized
  std::vector<std::vector<int32_t>> base_answers;   // the base's greedy answers
  std::optional<quality::BaseLogProbs> store;
  std::optional<quality::SegmentEvaluator> eval;
  int64_t row = 0;
  // The level being measured.
  LevelFigures figures;
  std::vector<float> klds;
  double kld_sum = 0;
  int64_t same_top = 0;
  double greedy_sum = 0;
};

std::optional<size_t> highest_level(const std::vector<LevelSpec>& levels) {
  std::optional<size_t> best;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (!best || level_rank(levels[i].label) > level_rank(levels[*best].label)) best = i;
  }
  return best;
}

Result<std::unique_ptr<CompareJob>> CompareJob::create(JobOptions options) {
  const size_t total = options.levels.size() + 1;
  if (total < 2 || total > 4) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("compare levels: choose 2 to 4 levels ({} chosen)", total));
  }
  if (!options.inputs.text && options.inputs.prompts.empty()) {
    return make_error(ErrorCode::InvalidArgument, "compare levels: the prompt set is empty");
  }
  if (options.base.make) return make_error(ErrorCode::InvalidArgument, "compare levels: the base must be a file Hearth has");
  std::error_code ec;
  for (const auto* level : [&] {
         std::vector<const LevelSpec*> all{&options.base};
         for (const auto& l : options.levels) all.push_back(&l);
         return all;
       }()) {
    const fs::path& need = level->make ? level->make_from : level->path;
    if (!fs::is_regular_file(need, ec)) {
      return make_error(ErrorCode::NotFound, fmt::format("compare levels: {}: no such model file", need.string()));
    }
  }
  std::unique_ptr<CompareJob> job(new CompareJob(std::move(options)));
  auto& work = job->state_->work;
  std::string pattern = (job->options_.work_dir / "level-compare-XXXXXX").string();
  fs::create_directories(job->options_.work_dir, ec);
  if (!::mkdtemp(pattern.data())) {
    return make_error(ErrorCode::Io, fmt::format("compare levels: cannot create a folder in {}",
                                                 job->options_.work_dir.string()));
  }
  work = pattern;
  return job;
}

CompareJob::CompareJob(JobOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {}

CompareJob::~CompareJob() {
  // The base's distributions are an unlinked file that goes with the store;
  // partial quantizations live in the job's folder.
  state_->eval.reset();
  state_->store.reset();
  state_->current = {};
  std::error_code ec;
  if (!state_->work.empty()) fs::remove_all(state_->work, ec);
}

bool CompareJob::done() const { return state_->phase == Phase::Done; }

int64_t CompareJob::steps_planned() const {
  int64_t makes = 0;
  for (const auto& l : options_.levels) makes += l.make ? 1 : 0;
  // With prompts, each one is an answer and (over the base's answer) a
  // segment. A text's windows are estimated at about 4 bytes per token until
  // the base has tokenized it.
  int64_t segments = 0, answers = 0;
  if (!options_.inputs.text) {
    segments = answers = static_cast<int64_t>(options_.inputs.prompts.size());
  } else if (state_->vocab.empty()) {
    segments = static_cast<int64_t>(options_.inputs.text->size()) / (4 * std::max<int64_t>(options_.n_ctx, 1));
    answers = std::min<int64_t>(options_.answer_prompts, segments);
  } else {
    segments = static_cast<int64_t>(state_->segments.size());
    answers = static_cast<int64_t>(state_->prompts.size());
  }
  const int64_t per_level = 2 + segments + answers;
  return makes + per_level * static_cast<int64_t>(options_.levels.size() + 1);
}

std::string CompareJob::activity() const {
  const auto label = [&](size_t level) { return level == 0 ? options_.base.label : options_.levels[level - 1].label; };
  switch (state_->phase) {
    case Phase::Make: {
      size_t i = state_->make_index;
      while (i < options_.levels.size() && !options_.levels[i].make) ++i;
      return i < options_.levels.size() ? "making " + options_.levels[i].label : "starting";
    }
    case Phase::Load: return "loading " + label(state_->level);
    case Phase::Answer: return "answering with " + label(state_->level);
    case Phase::Score: return "scoring " + label(state_->level);
    case Phase::Speed: return "timing " + label(state_->level);
    case Phase::Done: return "done";
  }
  return {};
}

namespace {

// The importance of each weight column of `source`, from it running the
// calibration text.
Result<std::shared_ptr<const tools::QuantImportance>> collect_for(const fs::path& source_path, const JobOptions& o) {
  HEARTH_TRY(auto source, model::Model::load(source_path));
  imatrix::CollectOptions c;
  c.n_ctx = static_cast<int32_t>(std::clamp<int64_t>(source->hparams().n_ctx_train, 64, 512));
  c.threads = o.threads;
  c.dataset = o.calibration_name;
  HEARTH_TRY(auto matrix, imatrix::collect_importance(*source, o.calibration_text, c));
  auto importance = std::make_shared<tools::QuantImportance>();
  importance->weights = imatrix::quant_weights(matrix);
  importance->file = "(collected while making the level)";
  importance->dataset = o.calibration_name;
  importance->chunks = matrix.chunk_count;
  return std::shared_ptr<const tools::QuantImportance>(std::move(importance));
}

// Quantizes `spec.make_from` into `spec.path` through a partial file in
// `work`, renamed (or copied, across file systems) when complete; with
// `importance` (null: plain) weighting the block searches.
Status make_level(const LevelSpec& spec, const fs::path& work, const JobOptions& o,
                  std::shared_ptr<const tools::QuantImportance> importance) {
  const fs::path part = work / (spec.path.filename().string() + ".part");
  tools::QuantizeOptions q;
  q.target = *spec.make;
  q.threads = o.threads;
  q.error_report = tools::ErrorReport::Skip;
  q.importance = std::move(importance);
  HEARTH_TRY(auto report, tools::quantize_model(spec.make_from, part, q));
  (void)report;
  std::error_code ec;
  fs::create_directories(spec.path.parent_path(), ec);
  fs::rename(part, spec.path, ec);
  if (ec) {
    ec.clear();
    fs::copy_file(part, spec.path, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return make_error(ErrorCode::Io, fmt::format("{}: cannot write the made level: {}", spec.path.string(), ec.message()));
    }
    fs::remove(part, ec);
  }
  return {};
}

Result<Loaded> load(const fs::path& path, const JobOptions& o, LevelFigures& figures) {
  const int64_t n_ctx = std::max<int64_t>({o.n_ctx, measure::speed_context(o.speed),
                                           static_cast<int64_t>(kMaxPromptTokens) + o.greedy_tokens});
  runtime::BackendRequest request;
  request.preference = o.backend;
  request.cpu_threads = o.threads;
  {
    HEARTH_TRY(auto header, gguf::GgufFile::open(path.string(), gguf::LoadMode::Mmap));
    HEARTH_TRY(const tools::ModelSummary summary, tools::summarize_model(header));
    HEARTH_TRY(const kv::MemoryEstimate estimate,
               kv::estimate_memory(summary.dims, summary.file_bytes, n_ctx, o.kv_type, kv::kScratchBatchTokens,
                                   kv::WindowedLayers::Ring));
    request.model = runtime::ModelFootprint{summary.dims.n_layer, estimate};
    // The figures the picker shows: its estimate and fit at the user's context.
    const auto shape = shape_of(summary.dims);
    const auto mem = models::estimate_memory(shape, summary.file_bytes, o.fit_kv);
    figures.file_bytes = summary.file_bytes;
    figures.memory_bytes = mem.total_bytes;
    figures.fit = models::compute_fit(shape, mem, o.machine).kind;
  }
  auto choice = runtime::choose_backend(request);
  Loaded out;
  out.backend = std::move(choice.backend);
  model::LoadOptions opts;
  opts.weights = model::weights_for(opts.weights, choice.cpu_computes);
  HEARTH_TRY(out.model, model::Model::load(path.string(), opts));
  HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(out.model->file()));
  out.tokenizer = std::make_unique<tokenizer::Tokenizer>(std::move(tok));
  return out;
}

}  // namespace

Status CompareJob::prepare_inputs() {
  auto& s = *state_;
  const auto& tok = *s.current.tokenizer;
  if (options_.inputs.text) {
    HEARTH_TRY(s.segments, quality::text_windows(quality::tokenize_text(tok, *options_.inputs.text), options_.n_ctx));
    // The answered prompts are the starts of the first windows.
    for (size_t i = 0; i < s.segments.size() && static_cast<int32_t>(i) < options_.answer_prompts; ++i) {
      const auto& t = s.segments[i].tokens;
      std::vector<int32_t> prompt(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(std::min(t.size(), kTextPromptTokens)));
      result_.prompts.push_back(tok.detokenize(prompt));
      s.prompts.push_back(std::move(prompt));
    }
    return {};
  }
  for (size_t i = 0; i < options_.inputs.prompts.size(); ++i) {
    auto ids = quality::tokenize_text(tok, options_.inputs.prompts[i]).tokens;
    if (ids.empty()) return make_error(ErrorCode::InvalidArgument, fmt::format("prompt {} is empty", i + 1));
    if (ids.size() > kMaxPromptTokens) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("prompt {} has {} tokens; at most {} are compared", i + 1, ids.size(), kMaxPromptTokens));
    }
    result_.prompts.push_back(options_.inputs.prompts[i]);
    s.prompts.push_back(std::move(ids));
  }
  return {};
}

Status CompareJob::score_segment(const quality::Segment& segment) {
  auto& s = *state_;
  std::vector<float> logits;
  HEARTH_CHECK(s.eval->evaluate(segment, logits));
  const auto n_vocab = static_cast<size_t>(s.eval->n_vocab());
  if (n_vocab != static_cast<size_t>(s.store->n_vocab())) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("{}: the vocabulary has {} tokens, the base's {}",
                                                              s.figures.path, n_vocab, s.store->n_vocab()));
  }
  quality::QuantizedLogProbs base_row;
  for (int64_t r = 0; r < segment.scored(); ++r) {
    const auto row = std::span<const float>(logits).subspan(static_cast<size_t>(r) * n_vocab, n_vocab);
    if (s.level == 0) {
      HEARTH_CHECK(s.store->append(quality::quantize_log_probs(row)));
      continue;
    }
    HEARTH_CHECK(s.store->read(s.row++, base_row));
    const auto p = quality::kl_divergence(base_row, row, segment.tokens[static_cast<size_t>(segment.first + r) + 1]);
    s.kld_sum += p.kld;
    s.same_top += p.same_top ? 1 : 0;
    s.klds.push_back(static_cast<float>(p.kld));
  }
  return {};
}

void CompareJob::finish_level() {
  auto& s = *state_;
  auto& f = s.figures;
  if (s.level == 0) {
    // The base against itself: no drift, the same answers.
    f.kld_mean = f.kld_p99 = 0;
    f.top1 = 1;
    f.greedy_same = options_.greedy_tokens;
    f.positions = s.store->rows();
  } else {
    f.positions = static_cast<int64_t>(s.klds.size());
    if (!s.klds.empty()) {
      const auto n = static_cast<double>(s.klds.size());
      f.kld_mean = s.kld_sum / n;
      std::sort(s.klds.begin(), s.klds.end());
      f.kld_p99 = quality::percentile(s.klds, 0.99f);
      f.top1 = static_cast<double>(s.same_top) / n;
    }
    f.greedy_same = s.prompts.empty() ? 0.0 : s.greedy_sum / static_cast<double>(s.prompts.size());
  }
  result_.levels.push_back(std::move(f));
}

Result<bool> CompareJob::step() {
  auto& s = *state_;
  const quality::EvalOptions eval_options{options_.kv_type, 512};
  const LevelSpec& spec = s.level == 0 ? options_.base : options_.levels[s.level - 1];
  switch (s.phase) {
    case Phase::Make: {
      while (s.make_index < options_.levels.size() && !options_.levels[s.make_index].make) ++s.make_index;
      if (s.make_index < options_.levels.size()) {
        const LevelSpec& made = options_.levels[s.make_index];
        std::shared_ptr<const tools::QuantImportance> importance;
        if (!options_.calibration_text.empty()) {
          auto& cached = s.importance[made.make_from];
          if (!cached) {
            HEARTH_TRY(cached, collect_for(made.make_from, options_));
          }
          importance = cached;
        }
        HEARTH_CHECK(make_level(made, s.work, options_, std::move(importance)));
        ++s.make_index;
        break;
      }
      s.phase = Phase::Load;
      [[fallthrough]];
    }
    case Phase::Load: {
      s.figures = LevelFigures{};
      s.figures.label = spec.label;
      s.figures.path = spec.path.string();
      s.figures.made = spec.make.has_value();
      s.figures.is_base = s.level == 0;
      HEARTH_TRY(s.current, load(spec.path, options_, s.figures));
      const auto& tokens = s.current.tokenizer->vocab().tokens;
      if (s.level == 0) {
        for (const auto& t : tokens) s.vocab.push_back(t.text);
        HEARTH_CHECK(prepare_inputs());
        HEARTH_TRY(auto store, quality::BaseLogProbs::create(static_cast<int32_t>(s.current.model->hparams().n_vocab)));
        s.store.emplace(std::move(store));
      } else {
        // Distributions over different vocabularies cannot be compared, even
        // when their sizes agree.
        bool same = tokens.size() == s.vocab.size();
        for (size_t i = 0; same && i < tokens.size(); ++i) same = tokens[i].text == s.vocab[i];
        if (!same) {
          return make_error(ErrorCode::InvalidArgument,
                            fmt::format("{}: its vocabulary differs from the base's", spec.path.string()));
        }
      }
      s.klds.clear();
      s.kld_sum = 0;
      s.same_top = 0;
      s.greedy_sum = 0;
      s.row = 0;
      s.item = 0;
      s.phase = Phase::Answer;
      break;
    }
    case Phase::Answer: {
      if (s.item < s.prompts.size()) {
        HEARTH_TRY(auto answer, quality::greedy_continuation(*s.current.model, *s.current.backend, s.prompts[s.item],
                                                             options_.greedy_tokens, eval_options));
        s.figures.answers.push_back(s.current.tokenizer->detokenize(answer));
        if (s.level == 0) {
          if (!options_.inputs.text) s.segments.push_back(quality::continuation_segment(s.prompts[s.item], answer));
          s.base_answers.push_back(std::move(answer));
        } else {
          s.greedy_sum += static_cast<double>(quality::common_prefix(answer, s.base_answers[s.item]));
        }
        ++s.item;
        break;
      }
      s.item = 0;
      s.phase = Phase::Score;
      [[fallthrough]];
    }
    case Phase::Score: {
      if (s.item < s.segments.size()) {
        if (!s.eval) {
          HEARTH_TRY(auto eval, quality::SegmentEvaluator::create(*s.current.model, *s.current.backend,
                                                                  quality::max_segment_tokens(s.segments), eval_options));
          s.eval.emplace(std::move(eval));
        }
        HEARTH_CHECK(score_segment(s.segments[s.item]));
        ++s.item;
        break;
      }
      s.eval.reset();
      s.phase = Phase::Speed;
      [[fallthrough]];
    }
    case Phase::Speed: {
      HEARTH_TRY(const auto runs, measure::measure_speed(*s.current.model, *s.current.backend, options_.kv_type,
                                                         options_.speed));
      s.figures.pp_tps = measure::stats(runs.pp_tps).mean;
      s.figures.tg_tps = measure::stats(runs.tg_tps).mean;
      finish_level();
      s.current = {};  // one model in memory at a time
      if (s.level < options_.levels.size()) {
        ++s.level;
        s.phase = Phase::Load;
      } else {
        s.phase = Phase::Done;
      }
      break;
    }
    case Phase::Done: return false;
  }
  ++steps_done_;
  return s.phase != Phase::Done;
}

}  // namespace hearth::compare
