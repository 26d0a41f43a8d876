// The ChatEngine over the engine library: model load with progress, the
// model's tokenizer and chat template, a runtime Session whose context a
// ConversationDriver keeps between replies (a follow-up only prefills what is
// new; the conversation's overflow policy makes room), and the figures the
// status line shows.
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/tools/model_info.h>
#include <hearth/engine/tokenizer/stream_decoder.h>
#include <hearth/engine/chat/json.h>
#include <hearth/engine/chat/template.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <nlohmann/json.hpp>

#include <QFileInfo>

#include <algorithm>
#include <filesystem>
#include <chrono>
#include <map>
#include <optional>
#include <random>

#include "engine_service/chat_engine.h"
#include "engine_service/conversation_driver.h"

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

// Disk budget of the saved system prompts; the least recently used go first.
constexpr uint64_t kPrefixCacheBudget = 1ull << 30;

class RuntimeChatEngine final : public ChatEngine {
 public:
  explicit RuntimeChatEngine(QString prefix_cache_dir) : prefix_cache_dir_(std::move(prefix_cache_dir)) {}

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress) override {
    unload();
    const std::string path = request.model_path.toStdString();
    const auto kv_type = request.kv_cache_type == QLatin1String("q8_0") ? DType::Q8_0 : DType::F16;

    model::LoadOptions options;
    options.progress = [&](const model::LoadProgress& p) {
      if (p.total_bytes > 0) progress(double(p.done_bytes) / double(p.total_bytes));
    };
    std::optional<runtime::ModelFootprint> footprint;
    {
      // The KV cache and scratch join the memory check made before the weights are read.
      HEARTH_TRY(auto header, gguf::GgufFile::open(path, gguf::LoadMode::Mmap));
      HEARTH_TRY(options.extra_bytes, tools::memory_beyond_weights(header, request.context_length, kv_type));
      // Partial offload places layers by the estimate the model picker shows,
      // with sliding-window layers as rings: that is what every backend allocates.
      HEARTH_TRY(const tools::ModelSummary summary, tools::summarize_model(header));
      HEARTH_TRY(const kv::MemoryEstimate estimate,
                 kv::estimate_memory(summary.dims, summary.file_bytes, request.context_length, kv_type,
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
    auto choice = runtime::choose_backend(backend_request);
    options.weights = model::weights_for(options.weights, choice.cpu_computes);
    HEARTH_TRY(model_, model::Model::load(path, options));
    backend_ = std::move(choice.backend);
    HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(model_->file()));
    tokenizer_.emplace(std::move(tok));

    template_.reset();
    auto source = model_->file().find_string("tokenizer.chat_template");
    if (source.ok() && *source) {
      auto parsed = chat::Template::parse(**source);
      // A template Hearth cannot parse leaves the model usable as plain completion.
      if (parsed.ok()) template_.emplace(std::move(parsed).value());
    }

    const auto& hp = model_->hparams();
    const int64_t n_ctx = std::min<int64_t>(request.context_length,
                                            hp.n_ctx_train > 0 ? hp.n_ctx_train : request.context_length);
    HEARTH_TRY(session_, runtime::Session::create(*model_, *backend_,
                                                  runtime::SessionConfig{n_ctx, kv_type, 256}));
    HEARTH_CHECK(make_driver(path));

    ui::ModelInfo info;
    info.path = request.model_path;
    auto name = model_->file().find_string("general.name");
    info.name = name.ok() && *name && !(*name)->empty() ? QString::fromStdString(**name)
                                                        : QFileInfo(request.model_path).completeBaseName();
    info.architecture = QString::fromStdString(hp.architecture);
    info.quant = dominant_type(model_->file());
    info.backend = QString::fromStdString(choice.description);
    info.context_max = static_cast<int>(session_->n_ctx());
    info.context_train = static_cast<int>(hp.n_ctx_train);
    info.n_layer = static_cast<int>(hp.n_layer);
    info.n_head_kv = static_cast<int>(hp.n_head_kv);
    info.head_dim = static_cast<int>(hp.head_dim);
    info.n_embd = static_cast<int>(hp.n_embd);
    info.n_vocab = static_cast<int>(hp.n_vocab);
    info.n_head = static_cast<int>(hp.n_head);
    info.n_ff = static_cast<int>(hp.n_ff);
    info.projections = model_->memory_dims().projections;
    info.layer_windows = model_->layer_windows();
    info.weights_bytes = model_->weight_bytes();
    return info;
  }

  void unload() override {
    driver_.reset();
    disk_.reset();
    prefixes_.reset();
    session_.reset();
    backend_.reset();
    template_.reset();
    tokenizer_.reset();
    model_.reset();
  }

  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override {
    if (!session_) return make_error(ErrorCode::InvalidArgument, "no model is loaded");
    const auto started = std::chrono::steady_clock::now();
    HEARTH_TRY(const runtime::OverflowPolicy policy,
               runtime::parse_overflow_policy(request.overflow_policy.toStdString()));
    // A reply may use at most a quarter of the context, so evicting or
    // summarising always leaves it room.
    const int64_t reply_room =
        std::min<int64_t>(std::max(1, request.max_new_tokens), std::max<int64_t>(8, session_->n_ctx() / 4));
    // A reply pre-empts background work (a summary in progress).
    HEARTH_CHECK(driver_->preempt(reply_room, on_event));
    const double pause_ms =
        request.sent_at_ns > 0
            ? std::max(0.0, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch() -
                                                                      std::chrono::nanoseconds(request.sent_at_ns))
                                .count())
            : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();

    auto prepared = driver_->prepare(request, policy, reply_room, on_event);
    if (!prepared.ok()) {
      // The context is in an unknown state; the next request starts over.
      driver_->forget();
      return prepared.error();
    }
    if (!prepared->stopped.empty()) {
      driver_->forget();
      return make_error(ErrorCode::LimitExceeded, prepared->stopped);
    }

    runtime::GenerateOptions options;
    options.max_tokens = static_cast<int32_t>(reply_room);
    options.sampler.temperature = static_cast<float>(request.sampling.temperature);
    options.sampler.top_k = request.sampling.top_k;
    options.sampler.top_p = static_cast<float>(request.sampling.top_p);
    options.sampler.min_p = static_cast<float>(request.sampling.min_p);
    options.sampler.repeat_penalty = static_cast<float>(request.sampling.repeat_penalty);
    options.sampler.seed = request.sampling.seed >= 0 ? static_cast<uint64_t>(request.sampling.seed)
                                                      : std::random_device{}();
    options.end_of_generation = end_of_generation();

    // The session polls an atomic; mirror the service's cancel flag into it.
    std::atomic<bool> cancel{false};
    bool first_piece = true;
    QString shown;
    // Pieces go out only as whole UTF-8 characters: a character split across
    // tokens is held back until complete (never shown as U+FFFD).
    tokenizer::StreamDecoder stream(*tokenizer_);
    auto show_text = [&](std::string_view text) {
      // A reply starts at its first visible character.
      if (first_piece) {
        while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
        if (text.empty()) return;
        first_piece = false;
      }
      shown += QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
      on_piece(text);
    };
    const size_t context_before = session_->context().size() + prepared->prompt.size();
    driver_->begin_reply();
    auto result = session_->generate(
        prepared->prompt, options, [&](int32_t t) { return stream.push(t); },
        [&](const runtime::TokenEvent& e) {
          if (cancelled()) cancel.store(true);
          show_text(e.text);
        },
        &cancel);
    if (!result.ok()) {
      driver_->forget();
      return result.error();
    }
    if (const std::string tail = stream.flush(); !tail.empty()) show_text(tail);
    const size_t context_after = session_->context().size();
    driver_->end_reply(shown, context_after > context_before ? context_after - context_before : 0);

    ui::GenerationStats stats;
    stats.ttft_ms = result->figures.ttft_ms;
    stats.tokens_per_second = result->figures.decode_tps;
    stats.generated_tokens = static_cast<int>(result->figures.generated_tokens);
    stats.context_used = static_cast<int>(session_->context().size());
    stats.context_max = static_cast<int>(session_->n_ctx());
    stats.stop_reason = QString::fromLatin1(runtime::to_string(result->reason));
    stats.pause_ms = pause_ms;
    stats.prefix_restored_tokens = static_cast<int>(driver_->restored_from_disk());
    return stats;
  }

  bool has_background_work() const override { return driver_ && driver_->has_background_work(); }

  Status background_step(const ContextEventFn& on_event) override {
    if (!driver_) return {};
    return driver_->background_step(on_event);
  }

 private:
  std::vector<int32_t> end_of_generation() const {
    std::vector<int32_t> eog = tokenizer_->vocab().eog;
    if (tokenizer_->vocab().special.eos != tokenizer::kNoToken) eog.push_back(tokenizer_->vocab().special.eos);
    return eog;
  }

  // Text as tokens without the BOS a tokenizer may add (pieces spliced into a context).
  std::vector<int32_t> raw_tokens(const std::string& text) const {
    return tokenizer_->tokenize(text, tokenizer::AddSpecial::No, tokenizer::ParseSpecial::Yes);
  }

  Status make_driver(const std::string& model_path) {
    auto identity = kv::identify_model_file(model_path);
    // The prefix index keeps copies of system-prompt blocks; a quarter of the
    // cache bounds it.
    prefixes_.emplace(identity.ok() ? identity->content_hash : 0, session_->cache().bytes() / 4);
    ConversationDriver::Engine e;
    e.session = session_.get();
    e.model = model_.get();
    e.backend = backend_.get();
    // K-shift and the prefix index copy rows on the host: a cache in
    // device-only memory (a discrete GPU) does without both.
    e.can_shift = session_->cache().layer_view(0).k != nullptr;
    e.prefixes = e.can_shift ? &*prefixes_ : nullptr;
    if (!prefix_cache_dir_.isEmpty() && identity.ok()) {
      std::error_code ec;
      std::filesystem::create_directories(prefix_cache_dir_.toStdString(), ec);
      disk_.emplace(prefix_cache_dir_.toStdString(), kPrefixCacheBudget);
      e.disk = &*disk_;
      e.model_identity = *identity;
    }
    e.render = [this](const QList<ui::ChatTurn>& turns, GenerationPrompt prompt) { return render(turns, prompt); };
    e.detokenize = [this](int32_t t) { return tokenizer_->token_to_piece(t); };
    e.end_of_generation = end_of_generation();
    if (template_) {
      // A standalone request, as the template renders one user message.
      HEARTH_TRY(auto ask, render({{ui::ChatRole::User, QStringLiteral("Summarize briefly.")}}, GenerationPrompt::Yes));
      const int32_t bos = tokenizer_->vocab().special.bos;
      if (!ask.empty() && ask.front() == bos) ask.erase(ask.begin());
      e.summary_request = std::move(ask);
    } else {
      e.summary_request = raw_tokens("\nIn short:");
    }
    e.note_prefix = raw_tokens("\nEarlier:");
    driver_ = std::make_unique<ConversationDriver>(std::move(e));
    return {};
  }

  // The conversation as prompt tokens: through the model's chat template when
  // it has one, else as plain text (completion models such as the demo): a
  // reply continues its message's text, the next message starts a new line.
  Result<std::vector<int32_t>> render(const QList<ui::ChatTurn>& turns, GenerationPrompt prompt) const {
    if (template_) {
      nlohmann::json messages = nlohmann::json::array();
      for (const auto& t : turns) {
        messages.push_back({{"role", role_text(t.role)}, {"content", t.text.toStdString()}});
      }
      const auto& vocab = tokenizer_->vocab();
      auto token_text = [&](tokenizer::TokenId id) {
        return id == tokenizer::kNoToken ? std::string() : tokenizer_->token_to_piece(id, tokenizer::ShowSpecial::Yes);
      };
      nlohmann::json context = {{"messages", messages},
                                {"add_generation_prompt", prompt == GenerationPrompt::Yes},
                                {"bos_token", token_text(vocab.special.bos)},
                                {"eos_token", token_text(vocab.special.eos)}};
      HEARTH_TRY(chat::Value value, chat::parse_json(context.dump(), "chat context"));
      HEARTH_TRY(std::string text, template_->render(value));
      // The template writes BOS itself when the model wants one.
      return tokenizer_->tokenize(text, tokenizer::AddSpecial::No, tokenizer::ParseSpecial::Yes);
    }
    std::string text;
    for (const auto& t : turns) {
      if (t.role == ui::ChatRole::System) continue;  // completion models have no system role
      if (t.role == ui::ChatRole::Assistant) {
        if (!t.text.isEmpty()) text += " " + t.text.toStdString();
        continue;
      }
      if (!text.empty()) text += "\n";
      text += t.text.toStdString();
    }
    return tokenizer_->tokenize(text, tokenizer::AddSpecial::AsVocab, tokenizer::ParseSpecial::No);
  }

  std::unique_ptr<model::Model> model_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  std::optional<chat::Template> template_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<runtime::Session> session_;
  QString prefix_cache_dir_;
  std::optional<kv::PrefixIndex> prefixes_;
  std::optional<kv::PrefixDiskCache> disk_;
  std::unique_ptr<ConversationDriver> driver_;  // after the session it drives
};

}  // namespace

std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir) {
  return std::make_unique<RuntimeChatEngine>(prefix_cache_dir);
}

}  // namespace hearth::app
