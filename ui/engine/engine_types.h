// Values that travel between the GUI thread and the engine thread. Plain
// copyable structs registered as Qt metatypes so queued signals can carry them.
#pragma once

#include <limits>

#include <hearth/engine/kv/memory_estimate.h>

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/memory_sizer.h"

namespace hearth::ui {

// Identifies one generation; results for stale ids are dropped.
using RequestId = quint64;

struct LoadRequest {
  QString model_path;
  int context_length = 4096;
  int memory_budget_mib = 4096;
  QString kv_cache_type = QStringLiteral("f16");
  int threads = 0;
  QString gpu_device;
  int gpu_layers = -1;
  // Speculative decoding: "off", "ngram" or "draft" (with draft_model_path).
  QString speculation = QStringLiteral("ngram");
  QString draft_model_path;
  int draft_max = 7;
  // Where the draft model runs: "cpu", or "vulkan" (the GPU device
  // gpu_device names, else the best one; no fallback to the CPU).
  QString draft_backend = QStringLiteral("cpu");
  // The Auto model (model_path == kAutoModelPath, auto_model_path.h): its
  // small and large models (files or remote models) and the routing
  // thresholds, nats per token.
  QString auto_small_path;
  QString auto_large_path;
  double auto_min_confidence = -2.0;
  double auto_min_familiarity = -5.0;
  // Grows with every load the app asks for: a newer load cancels an older
  // one still running, and results carry the id so a late answer to a
  // superseded load is recognised and ignored.
  qint64 load_id = 0;
};

// What the engine reports about a loaded model. Shape figures feed the memory
// estimate of the settings page.
struct ModelInfo {
  QString path;
  QString name;          // e.g. "stories260K"
  QString architecture;  // e.g. "llama"
  QString quant;         // dominant tensor type, e.g. "Q4_K_M" or "F32"
  QString backend;       // "Vulkan: <device>" or "CPU: <reason>"
  QString chat_format;   // empty: the model's own template; else which one is used instead, and why
  qint64 load_id = 0;    // the LoadRequest's
  int context_max = 0;   // tokens the loaded cache holds
  int context_train = 0; // the model's trained context length
  // What sizing needs of it: layers, heads, widths, experts, windows, weight bytes.
  ModelShape shape;
  // The reasoning switch the model's template offers, as the choices besides
  // "default": {"off", "on"} (Qwen3, SmolLM3), {"low", "medium", "high"}
  // (gpt-oss), or empty when it has none.
  QStringList reasoning_choices;
  // How replies are drafted: "n-gram drafts", "draft model <name>", "off",
  // or "off: <why>" when the chosen draft model could not be used.
  QString speculation;
  // The draft model loaded beside it (speculation with a draft model): its
  // file and shape, so the memory estimate counts its KV cache (F16, the
  // chat's context) besides its weights. nullopt without one.
  QString draft_path;
  std::optional<ModelShape> draft_shape;
};

enum class ChatRole { System, User, Assistant };

struct ChatTurn {
  ChatRole role = ChatRole::User;
  QString text;
  // An earlier reply's reasoning: the template decides whether it is rendered
  // again (most leave it out of later turns).
  QString reasoning = {};
};

struct Sampling {
  double temperature = 0.7;
  int top_k = 40;
  double top_p = 0.95;
  double min_p = 0.05;
  double repeat_penalty = 1.1;
  qint64 seed = -1;
};

struct GenerationRequest {
  QList<ChatTurn> turns;  // system prompt first, the user's last message last
  Sampling sampling;
  QString overflow_policy = QStringLiteral("evict");  // stop, evict or summarize
  int max_new_tokens = 1024;
  // The conversation the turns belong to: the engine keeps one conversation's
  // context (and what its overflow policy did to it) between requests.
  qint64 conversation_id = -1;
  // The conversation's reasoning switch: "default", "off", "on", "low",
  // "medium" or "high"; a choice the template does not offer is ignored.
  QString reasoning = QStringLiteral("default");
  // std::chrono::steady_clock time (ns) the request was sent; the engine
  // reports how long it waited behind background work (GenerationStats::pause_ms).
  qint64 sent_at_ns = 0;
  // Answer a deterministic request (temperature 0) from the response cache when
  // the same model saw the same request before (Settings: the user's choice).
  bool use_response_cache = false;
  // Report the mean log-probability of the reply's tokens (GenerationStats::
  // mean_logprob): a router's confidence probe. Runs without speculation.
  bool collect_logprobs = false;
  // Score how familiar the prompt's last N new tokens are to the model
  // (GenerationStats::prompt_mean_logprob); 0: off. A router's second probe.
  int score_prompt_tokens = 0;
  // The user asked for the large model ("think harder", "ask the large model").
  bool escalate = false;
};

// Figures of one finished (or stopped) reply.
struct GenerationStats {
  double ttft_ms = 0;
  double tokens_per_second = 0;
  int generated_tokens = 0;
  int context_used = 0;
  int context_max = 0;
  // "end_of_generation", "stop_string", "max_tokens", "context_full", "cancelled";
  // a remote reply: "cut" when its stream broke off (the text so far is kept).
  QString stop_reason;
  double pause_ms = 0;  // from sending to the start of the reply (waiting on background work)
  int prefix_restored_tokens = 0;  // system-prompt positions loaded from the disk cache for this reply
  // From the first to the last reasoning piece; negative when the reply had no reasoning.
  double reasoning_ms = -1;
  // Speculative decoding in this reply: the share of drafted tokens kept
  // (negative: nothing was drafted) and tokens/s with drafts over without
  // (0 until both were measured); `speculation_off` when the engine found
  // drafting slower and paused it.
  double draft_acceptance = -1;
  double speculation_speedup = 0;
  bool speculation_off = false;
  // The reply came from the response cache (the model did not run).
  bool from_cache = false;
  // With GenerationRequest::collect_logprobs: the mean natural-log probability
  // of the reply's tokens under the model (0 when none were generated).
  double mean_logprob = 0;
  // With GenerationRequest::score_prompt_tokens: the mean natural-log
  // probability of the scored prompt tokens, and how many were scored.
  double prompt_mean_logprob = 0;
  int prompt_scored_tokens = 0;
  // An "Auto" model's choice: "small" or "large", why, and the small model's
  // confidence score and its familiarity with the question when it was asked
  // (NaN otherwise); `answered_by` names the model that wrote the reply.
  QString routed_to;
  QString route_reason;
  double route_score = std::numeric_limits<double>::quiet_NaN();
  double route_familiarity = std::numeric_limits<double>::quiet_NaN();
  QString answered_by;
};

// Something the engine did to fit the context: turns dropped or summarized.
struct ContextEvent {
  enum class Kind { Dropped, Summarized };
  Kind kind = Kind::Dropped;
  int at_token = 0;        // context position where it happened
  int turns = 0;           // how many turns it affected
  QString summary;         // the summary text (Summarized only)
  qint64 conversation_id = -1;
  // The messages affected, as indices into the request's turns (system
  // prompt included); -1 when unknown (e.g. only an earlier summary).
  int first_message = -1;
  int last_message = -1;
  int tokens_freed = 0;    // context positions given back
  double pause_ms = 0;     // how long the engine spent on it
};

// The local OpenAI-compatible API as the user set it (Settings -> Local API).
// The engine serves it on the loaded model; the app's own chat comes first.
struct LocalApiRequest {
  bool enabled = false;
  QString host = QStringLiteral("127.0.0.1");
  int port = 8080;
  int parallel = 2;
  int context_length = 2048;  // per request slot
  QString key_file;           // the bearer token's file (created 0600 when missing)
  bool new_key = false;       // replace the token (old clients stop working)
};

// What the local API is doing, reported on every change and about once a
// second while it runs.
struct LocalApiStatus {
  bool running = false;
  QString url;      // e.g. "http://127.0.0.1:8080/v1"
  QString token;    // the bearer token clients send
  QString error;    // why it is not running (empty when off by choice)
  qint64 pending = 0;   // requests queued or generating
  qint64 served = 0;    // completion requests served since it started
  double tokens_per_second = 0;  // generated over the last few seconds, all requests
  double latency_p50_ms = 0;     // time between consecutive tokens of a request, recent ones
  double latency_p95_ms = 0;
  qint64 yielded_steps = 0;  // batch steps that waited for the app's own chat
};

}  // namespace hearth::ui

Q_DECLARE_METATYPE(hearth::ui::LocalApiRequest)
Q_DECLARE_METATYPE(hearth::ui::LocalApiStatus)
Q_DECLARE_METATYPE(hearth::ui::LoadRequest)
Q_DECLARE_METATYPE(hearth::ui::ModelInfo)
Q_DECLARE_METATYPE(hearth::ui::GenerationRequest)
Q_DECLARE_METATYPE(hearth::ui::GenerationStats)
Q_DECLARE_METATYPE(hearth::ui::ContextEvent)
