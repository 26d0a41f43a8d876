// The ChatEngine over the engine library: model load with progress (and
// cancellation), the model's tokenizer and chat format, and a runtime
// ChatContext (the chat layer hearth-cli and the server use too) that keeps
// the conversation's context between replies; the figures the status line
// shows.
#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/runtime/drafter.h>
#include <hearth/engine/runtime/chat_context.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/tools/model_info.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <QFileInfo>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>

#include "engine_service/chat_engine.h"
#include "engine_service/local_api_host.h"

namespace hearth::app {
namespace {

// The tensor type holding most weight bytes: what users call the model's quant.
QString dominant_type(const gguf::GgufFile& file) {
  std::map<DType, uint64_t> bytes;
  for (const auto& t : file.tensors()) bytes[t.type] += t.bytes;
  auto best = std::max_element(bytes.begin(), bytes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == bytes.end() ? QString() : QString::fromUtf8(std::string(traits(best->first).name));
}

const char* role_text(ui::ChatRole role) {
  switch (role) {
    case ui::ChatRole::System: return "system";
    case ui::ChatRole::User: return "user";
    case ui::ChatRole::Assistant: return "assistant";
  }
  return "user";
}

ui::ContextEvent to_ui(const runtime::ChatEvent& e) {
  ui::ContextEvent out;
  out.kind = e.kind == runtime::ChatEvent::Kind::Summarized ? ui::ContextEvent::Kind::Summarized
                                                            : ui::ContextEvent::Kind::Dropped;
  out.conversation_id = e.conversation_id;
  out.at_token = static_cast<int>(e.at_token);
  out.turns = static_cast<int>(e.turns);
  out.tokens_freed = static_cast<int>(e.tokens_freed);
  out.pause_ms = e.pause_ms;
  out.summary = QString::fromStdString(e.summary).trimmed();
  out.first_message = static_cast<int>(e.first_message);
  out.last_message = static_cast<int>(e.last_message);
  return out;
}

// The switch the template offers, as the choices the app may show.
QStringList reasoning_choices(const chat::ReasoningStyle& style) {
  QStringList out;
  for (auto choice : {chat::ReasoningChoice::Off, chat::ReasoningChoice::On, chat::ReasoningChoice::Low,
                      chat::ReasoningChoice::Medium, chat::ReasoningChoice::High}) {
    // On and Off mean "high" and "low" to an effort template: only its own levels are shown.
    if (style.effort_levels && (choice == chat::ReasoningChoice::On || choice == chat::ReasoningChoice::Off)) continue;
    if (style.offers(choice)) out.append(QString::fromLatin1(chat::to_string(choice)));
  }
  return out;
}

// Disk budget of the saved system prompts; the least recently used go first.
constexpr uint64_t kPrefixCacheBudget = 1ull << 30;

class RuntimeChatEngine final : public ChatEngine {
 public:
  RuntimeChatEngine(QString prefix_cache_dir, Logger logger)
      : prefix_cache_dir_(std::move(prefix_cache_dir)), logger_(std::move(logger)) {}

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override {
    unload();
    const std::string path = request.model_path.toStdString();
    const auto kv_type = request.kv_cache_type == QLatin1String("q8_0") ? DType::Q8_0 : DType::F16;
    api_threads_ = request.threads;
    model_path_ = request.model_path;
    api_kv_type_ = kv_type;

    model::LoadOptions options;
    options.progress = [&](const model::LoadProgress& p) {
      if (p.total_bytes > 0) progress(double(p.done_bytes) / double(p.total_bytes));
    };
    options.cancelled = cancelled;
    std::optional<runtime::ModelFootprint> footprint;
    int64_t n_ctx = request.context_length;
    {
      // The KV cache and scratch join the memory check made before the weights
      // are read, at the context the session will have (the request clamped
      // to the model's training context).
      HEARTH_TRY(auto header, gguf::GgufFile::open(path, gguf::LoadMode::Mmap));
      HEARTH_TRY(const tools::ModelSummary summary, tools::summarize_model(header));
      if (summary.context_length > 0) n_ctx = std::min<int64_t>(n_ctx, summary.context_length);
      HEARTH_TRY(options.extra_bytes, tools::memory_beyond_weights(header, n_ctx, kv_type));
      // Partial offload places layers by the estimate the model picker shows,
      // with sliding-window layers as rings: that is what every backend allocates.
      HEARTH_TRY(const kv::MemoryEstimate estimate,
                 kv::estimate_memory(summary.dims, summary.file_bytes, n_ctx, kv_type,
                                     kv::kScratchBatchTokens, kv::WindowedLayers::Ring));
      footprint = runtime::ModelFootprint{summary.dims.n_layer, estimate};
    }
    // The backend first: where the layers run decides where the weights live
    // (model::weights_for).
    runtime::BackendRequest backend_request;
    backend_request.preference =
        request.gpu_layers == 0 ? runtime::BackendPreference::Cpu : runtime::BackendPreference::Auto;
    backend_request.gpu_device = request.gpu_device.toStdString();
    backend_request.cpu_threads = request.threads;
    // gpu_layers: -1 automatic (from free VRAM), 0 CPU only, N the first N layers.
    backend_request.gpu_layers = request.gpu_layers < 0
                                     ? runtime::GpuLayers{runtime::GpuLayersMode::Auto, 0}
                                     : runtime::GpuLayers{runtime::GpuLayersMode::Count, request.gpu_layers};
    backend_request.model = footprint;
    backend_request.vulkan_instance = vulkan_instance(backend_request.preference);
    auto choice = runtime::choose_backend(backend_request, logger_);
    options.weights = model::weights_for(options.weights, choice.cpu_computes);
    HEARTH_TRY(model_, model::Model::load(path, options));
    backend_ = std::move(choice.backend);
    HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(model_->file(), logger_));
    tokenizer_.emplace(std::move(tok));
    // The same rule as hearth-cli: the model's template, else the built-in
    // one its vocabulary points to, else plain text (a completion model).
    format_.emplace(runtime::ChatFormat::from_model(model_->file(), *tokenizer_, logger_));

    const auto& hp = model_->hparams();
    HEARTH_TRY(session_, runtime::Session::create(*model_, *backend_,
                                                  runtime::SessionConfig{n_ctx, kv_type, 256}));
    make_chat(path);

    ui::ModelInfo info;
    info.speculation = make_speculator(request, n_ctx);
    info.path = request.model_path;
    auto name = model_->file().find_string("general.name");
    info.name = name.ok() && *name && !(*name)->empty() ? QString::fromStdString(**name)
                                                        : QFileInfo(request.model_path).completeBaseName();
    info.architecture = QString::fromStdString(hp.architecture);
    info.quant = dominant_type(model_->file());
    info.backend = QString::fromStdString(choice.description);
    // Said in the status line when it is not the model's own template.
    if (format_->origin() != runtime::TemplateOrigin::Model) info.chat_format = QString::fromStdString(format_->note());
    info.context_max = static_cast<int>(session_->n_ctx());
    info.context_train = static_cast<int>(hp.n_ctx_train);
    info.shape = sizing_shape(*model_);
    info.reasoning_choices = reasoning_choices(format_->reasoning());
    if (draft_model_) {
      info.draft_path = request.draft_model_path;
      info.draft_shape = sizing_shape(*draft_model_);
    }
    // The local API follows the model the user picked.
    if (api_request_.enabled) start_local_api();
    return info;
  }

  void unload() override {
    stop_local_api();
    speculator_.reset();
    draft_model_.reset();
    draft_backend_.reset();
    chat_.reset();
    disk_.reset();
    prefixes_.reset();
    session_.reset();
    backend_.reset();
    format_.reset();
    tokenizer_.reset();
    model_.reset();
  }

  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override {
    if (!session_) return make_error(ErrorCode::InvalidArgument, "no model is loaded");
    const auto started = std::chrono::steady_clock::now();
    runtime::ChatRequest chat;
    HEARTH_TRY(chat.policy, runtime::parse_overflow_policy(request.overflow_policy.toStdString()));
    chat.conversation_id = request.conversation_id;
    // An earlier reply's reasoning goes with it: the template decides whether
    // later turns render it again.
    for (const auto& t : request.turns) {
      chat.messages.push_back({role_text(t.role), t.text.toStdString(), {}, t.reasoning.toStdString()});
    }
    if (const auto choice = chat::parse_reasoning_choice(request.reasoning.toStdString())) chat.reasoning = *choice;
    chat.options.max_tokens = std::max(1, request.max_new_tokens);
    chat.options.sampler.temperature = static_cast<float>(request.sampling.temperature);
    chat.options.sampler.top_k = request.sampling.top_k;
    chat.options.sampler.top_p = static_cast<float>(request.sampling.top_p);
    chat.options.sampler.min_p = static_cast<float>(request.sampling.min_p);
    chat.options.sampler.repeat_penalty = static_cast<float>(request.sampling.repeat_penalty);
    chat.options.sampler.seed = request.sampling.seed >= 0 ? static_cast<uint64_t>(request.sampling.seed)
                                                           : std::random_device{}();
    if (speculator_ && request.conversation_id != speculated_conversation_) {
      // The drafts' rates describe one conversation's text.
      speculator_->reset();
      speculated_conversation_ = request.conversation_id;
    }
    // A confidence probe reads each token's probability on the plain path.
    chat.options.collect_logprobs = request.collect_logprobs;
    chat.options.score_prompt_tokens = request.score_prompt_tokens;
    chat.options.speculator = request.collect_logprobs ? nullptr : speculator_.get();
    auto forward = [&](const runtime::ChatEvent& e) {
      if (on_event) on_event(to_ui(e));
    };
    // Stop and app close are asked before every prefill batch and token.
    const runtime::Cancellation cancel(cancelled);  // an empty function never cancels
    // The local API's batches wait while this reply runs.
    std::optional<ChatTurn> chat_first;
    if (api_) chat_first.emplace(api_->gate());
    // How long the reply waited from sending to its start (a summary step
    // it pre-empted, or the queue), for the status line.
    const double pause_ms =
        request.sent_at_ns > 0
            ? std::max(0.0, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch() -
                                                                      std::chrono::nanoseconds(request.sent_at_ns))
                                .count())
            : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    auto replied = chat_->reply(chat, runtime::ReplyStreams{on_piece, on_reasoning, forward}, cancel);
    if (!replied.ok() && replied.error().code == ErrorCode::Cancelled) {
      // Stopped before the first token (during the prompt's prefill): a reply
      // with nothing in it, as a stop between tokens ends one.
      ui::GenerationStats stats;
      stats.stop_reason = QString::fromLatin1(runtime::to_string(runtime::StopReason::Cancelled));
      stats.context_used = static_cast<int>(session_->context().size());
      stats.context_max = static_cast<int>(session_->n_ctx());
      stats.pause_ms = pause_ms;
      return stats;
    }
    HEARTH_TRY(runtime::ChatReply reply, std::move(replied));
    if (!reply.stopped.empty()) return make_error(ErrorCode::LimitExceeded, reply.stopped);

    ui::GenerationStats stats;
    stats.ttft_ms = reply.result.figures.ttft_ms;
    stats.tokens_per_second = reply.result.figures.decode_tps;
    stats.generated_tokens = static_cast<int>(reply.result.figures.generated_tokens);
    stats.context_used = static_cast<int>(session_->context().size());
    stats.context_max = static_cast<int>(session_->n_ctx());
    stats.stop_reason = QString::fromLatin1(runtime::to_string(reply.result.reason));
    stats.pause_ms = pause_ms;
    stats.prefix_restored_tokens = static_cast<int>(reply.prefix_restored_tokens);
    if (!reply.result.logprobs.empty()) {
      double sum = 0;
      for (float lp : reply.result.logprobs) sum += lp;
      stats.mean_logprob = sum / static_cast<double>(reply.result.logprobs.size());
    }
    if (!reply.result.prompt_logprobs.empty()) {
      double sum = 0;
      for (float lp : reply.result.prompt_logprobs) sum += lp;
      stats.prompt_scored_tokens = static_cast<int>(reply.result.prompt_logprobs.size());
      stats.prompt_mean_logprob = sum / static_cast<double>(stats.prompt_scored_tokens);
    }
    if (speculator_) {
      const runtime::SpecFigures& spec = reply.result.spec;
      stats.draft_acceptance = spec.drafted > 0 ? spec.acceptance_rate() : -1.0;
      stats.speculation_speedup = speculator_->figures().speedup();
      stats.speculation_off = speculator_->switched_off();
    }
    return stats;
  }

  ui::LocalApiStatus configure_local_api(const ui::LocalApiRequest& request) override {
    api_request_ = request;
    stop_local_api();
    if (!request.enabled) {
      std::lock_guard lock(api_mutex_);
      api_status_ = {};
      return api_status_;
    }
    if (!model_) {
      std::lock_guard lock(api_mutex_);
      api_status_ = {};
      api_status_.error = QStringLiteral("The local API starts when a model is loaded.");
      return api_status_;
    }
    start_local_api();
    api_request_.new_key = false;  // a new token once, not at every later start
    return local_api_status();
  }

  ui::LocalApiStatus local_api_status() const override {
    std::lock_guard lock(api_mutex_);
    return api_ ? api_->status() : api_status_;
  }

  bool has_background_work() const override { return chat_ && chat_->has_background_work(); }

  Status background_step(const ContextEventFn& on_event) override {
    if (!chat_) return {};
    return chat_->background_step([&](const runtime::ChatEvent& e) {
      if (on_event) on_event(to_ui(e));
    });
  }

 private:
  // What the settings page's sizer needs of a loaded model.
  static ui::ModelShape sizing_shape(const model::Model& m) {
    const auto& hp = m.hparams();
    const kv::ModelDims dims = m.memory_dims();
    ui::ModelShape s;
    s.n_layer = static_cast<int>(hp.n_layer);
    s.n_head_kv = static_cast<int>(hp.n_head_kv);
    s.head_dim = static_cast<int>(hp.head_dim);
    s.n_embd = static_cast<int>(hp.n_embd);
    s.n_vocab = static_cast<int>(hp.n_vocab);
    s.n_head = static_cast<int>(hp.n_head);
    s.n_ff = static_cast<int>(hp.n_ff);
    s.n_expert = static_cast<int>(dims.n_expert);
    s.n_expert_used = static_cast<int>(dims.n_expert_used);
    s.n_ff_exp = static_cast<int>(dims.n_ff_exp);
    s.expert_biases = dims.expert_biases;
    s.projections = dims.projections;
    s.layer_windows = m.layer_windows();
    s.weights_bytes = m.weight_bytes();
    return s;
  }

  // The drafter the settings ask for, and what the status line says about
  // it. A draft model that cannot draft (another vocabulary, an unreadable
  // file, no Vulkan device when the draft should run there) leaves
  // speculation off with the reason, never silently.
  QString make_speculator(const ui::LoadRequest& request, int64_t n_ctx) {
    runtime::SpeculationConfig config;
    config.draft_max = std::max(1, request.draft_max);
    if (request.speculation == QLatin1String("off")) return QStringLiteral("off");
    if (request.speculation != QLatin1String("draft")) {
      speculator_ = std::make_unique<runtime::Speculator>(std::make_unique<runtime::NgramDrafter>(), config);
      return QStringLiteral("n-gram drafts");
    }
    if (request.draft_model_path.isEmpty()) return QStringLiteral("off: no draft model is chosen");
    const QString name = QFileInfo(request.draft_model_path).completeBaseName();
    auto where = make_draft_backend(request);
    if (!where.ok()) {
      logger_.warn("draft model {}: {}", request.draft_model_path.toStdString(), where.error().message);
      return QStringLiteral("off: %1: %2").arg(name, QString::fromStdString(where.error().message));
    }
    draft_backend_ = std::move(where->backend);
    model::LoadOptions draft_options;
    // On the GPU the draft's weights are uploaded once: the mapping, not a copy in RAM.
    draft_options.weights = model::weights_for(draft_options.weights, where->cpu_computes);
    auto draft = model::Model::load(request.draft_model_path.toStdString(), draft_options);
    Status ready = draft.ok() ? Status{} : Status(draft.error());
    std::unique_ptr<runtime::ModelDrafter> drafter;
    if (ready.ok()) {
      auto made = runtime::ModelDrafter::create(*model_, **draft, *draft_backend_, n_ctx);
      if (made.ok()) {
        drafter = std::move(*made);
      } else {
        ready = made.error();
      }
    }
    if (!ready.ok()) {
      logger_.warn("draft model {}: {}", request.draft_model_path.toStdString(), ready.error().message);
      draft_backend_.reset();
      return QStringLiteral("off: %1: %2").arg(name, QString::fromStdString(ready.error().message));
    }
    draft_model_ = std::move(*draft);
    speculator_ = std::make_unique<runtime::Speculator>(std::move(drafter), config);
    return where->on_gpu ? QStringLiteral("draft model %1 on %2").arg(name, QString::fromStdString(where->description))
                         : QStringLiteral("draft model %1").arg(name);
  }

  struct DraftPlace {
    std::unique_ptr<backend::Backend> backend;
    model::CpuComputes cpu_computes = model::CpuComputes::Yes;
    bool on_gpu = false;
    std::string description;  // "Vulkan: <device>" on the GPU
  };

  // The backend the draft model runs on. The CPU by default: the draft is
  // small and its steps interleave with the model's. Vulkan when the
  // settings ask for it, on the device the model would use; a Vulkan
  // request that cannot be met is an error, never a quiet move to the CPU.
  Result<DraftPlace> make_draft_backend(const ui::LoadRequest& request) {
    DraftPlace out;
    if (request.draft_backend == QLatin1String("cpu")) {
      out.backend = backend::make_cpu_backend({std::max(1, api_threads_)});
      return out;
    }
    if (request.draft_backend != QLatin1String("vulkan")) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("draft backend '{}' is not one of cpu, vulkan", request.draft_backend.toStdString()));
    }
    runtime::BackendRequest wanted;
    // By name: a software device serves too when the user picked Vulkan.
    wanted.preference = runtime::BackendPreference::Vulkan;
    wanted.gpu_device = request.gpu_device.toStdString();
    wanted.cpu_threads = std::max(1, api_threads_);
    wanted.vulkan_instance = vulkan_instance(wanted.preference);
    auto chosen = runtime::choose_backend(wanted, logger_);
    if (chosen.cpu_computes == model::CpuComputes::Yes) {
      // choose_backend fell back to the CPU: its description says why ("CPU: <reason>").
      std::string why = chosen.description;
      if (why.rfind("CPU: ", 0) == 0) why = why.substr(5);
      return make_error(ErrorCode::NotFound, fmt::format("no Vulkan device for the draft model ({})", why));
    }
    out.backend = std::move(chosen.backend);
    out.cpu_computes = chosen.cpu_computes;
    out.on_gpu = true;
    out.description = chosen.description;
    return out;
  }

  void make_chat(const std::string& model_path) {
    auto identity = kv::identify_model_file(model_path);
    // The prefix index keeps copies of system-prompt blocks; a quarter of the
    // cache bounds it.
    prefixes_.emplace(identity.ok() ? identity->content_hash : 0, session_->cache().bytes() / 4);
    runtime::ChatParts parts;
    parts.session = session_.get();
    parts.model = model_.get();
    parts.backend = backend_.get();
    parts.format = &*format_;
    // K-shift and the prefix index copy rows on the host: a cache in
    // device-only memory (a discrete GPU) does without both.
    parts.can_shift = session_->cache().layer_view(0).k != nullptr;
    parts.prefixes = parts.can_shift ? &*prefixes_ : nullptr;
    if (!prefix_cache_dir_.isEmpty() && identity.ok()) {
      std::error_code ec;
      std::filesystem::create_directories(prefix_cache_dir_.toStdString(), ec);
      disk_.emplace(prefix_cache_dir_.toStdString(), kPrefixCacheBudget, logger_);
      parts.disk = &*disk_;
      parts.model_identity = *identity;
    }
    chat_ = std::make_unique<runtime::ChatContext>(std::move(parts));
  }

  void start_local_api() {
    LocalApiConfig c;
    c.host = api_request_.host.toStdString();
    c.port = api_request_.port;
    c.parallel = api_request_.parallel;
    c.n_ctx = std::min<int64_t>(api_request_.context_length, std::max<int64_t>(model_->hparams().n_ctx_train, 256));
    c.threads = api_threads_;
    c.kv_type = api_kv_type_;
    c.key_file = api_request_.key_file.toStdString();
    c.new_key = api_request_.new_key;
    c.model_id = QFileInfo(model_path_).completeBaseName().toStdString();
    c.ngram_drafts = speculator_ != nullptr;
    if (speculator_) c.draft_max = speculator_->config().draft_max;
    auto host = LocalApiHost::start(*model_, *format_, c);
    std::lock_guard lock(api_mutex_);
    api_status_ = {};
    if (!host.ok()) {
      api_status_.error = QString::fromStdString(host.error().message);
      logger_.warn("local API: {}", host.error().message);
      return;
    }
    api_ = std::move(host).value();
  }

  void stop_local_api() {
    std::unique_ptr<LocalApiHost> old;
    {
      std::lock_guard lock(api_mutex_);
      old = std::move(api_);
    }
    old.reset();  // joins its threads outside the lock
  }

  // The Vulkan instance every load and draft model opens its device on, made
  // at the first load that may use a GPU and kept for the engine's life.
  std::shared_ptr<vulkan::VulkanInstance> vulkan_instance(runtime::BackendPreference preference) {
    if (!vulkan_instance_ && preference != runtime::BackendPreference::Cpu) {
      vulkan_instance_ = runtime::keep_vulkan_instance(logger_);
    }
    return vulkan_instance_;
  }

  std::shared_ptr<vulkan::VulkanInstance> vulkan_instance_;  // null until a GPU load, or without a driver
  std::unique_ptr<model::Model> model_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  std::optional<runtime::ChatFormat> format_;  // after the tokenizer it reads
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<runtime::Session> session_;
  QString prefix_cache_dir_;
  Logger logger_;  // the app's log sink for the engine's own messages
  std::optional<kv::PrefixIndex> prefixes_;
  std::optional<kv::PrefixDiskCache> disk_;
  std::unique_ptr<runtime::ChatContext> chat_;  // after the session it drives
  // Speculative decoding: the drafter's model and backend outlive it.
  std::unique_ptr<backend::Backend> draft_backend_;
  std::unique_ptr<model::Model> draft_model_;
  std::unique_ptr<runtime::Speculator> speculator_;
  int64_t speculated_conversation_ = -1;
  // The local API: what the user asked for (kept across loads), the host
  // while it runs (status() reads it from other threads), else why not.
  ui::LocalApiRequest api_request_;
  int api_threads_ = 0;
  QString model_path_;
  DType api_kv_type_ = DType::F16;
  mutable std::mutex api_mutex_;
  std::unique_ptr<LocalApiHost> api_;
  ui::LocalApiStatus api_status_;
};

}  // namespace

std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir) {
  return std::make_unique<RuntimeChatEngine>(prefix_cache_dir, Logger());
}

std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir, const Logger& logger) {
  return std::make_unique<RuntimeChatEngine>(prefix_cache_dir, logger);
}

}  // namespace hearth::app
