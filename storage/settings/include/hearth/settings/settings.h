// Typed application settings. Every setting the app persists lives in this
// struct; settings_store.cpp is the only place that maps it to QSettings keys,
// so no string key appears anywhere else in the code base.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::settings {

enum class KvCacheType { F16, Q8_0 };
enum class OverflowPolicy { Stop, Evict, Summarize };
enum class Theme { System, Light, Dark };
enum class SpeculationMode { Off, Ngram, DraftModel };
// Where a draft model runs: the CPU (the default), or Vulkan when the user
// asks for it and a device is present.
enum class DraftBackend { Cpu, Vulkan };

// Sampling parameters of one reply; also stored per conversation as overrides.
struct SamplingSettings {
  double temperature = 0.7;
  int top_k = 40;
  double top_p = 0.95;
  double min_p = 0.05;
  double repeat_penalty = 1.1;
  // Negative means "a fresh random seed per reply".
  int64_t seed = -1;

  friend bool operator==(const SamplingSettings&, const SamplingSettings&) = default;
};

// Speculative decoding: drafts verified by the model in one pass. N-gram
// lookup needs no second model and is the default; a draft model must share
// the loaded model's vocabulary. Greedy replies are the same either way.
struct SpeculationSettings {
  SpeculationMode mode = SpeculationMode::Ngram;
  std::string draft_model_path;  // DraftModel: the small model that drafts
  int draft_max = 7;             // tokens drafted per step at most (the engine's limit: 7)
  DraftBackend draft_backend = DraftBackend::Cpu;  // DraftModel: where the draft model runs

  friend bool operator==(const SpeculationSettings&, const SpeculationSettings&) = default;
};

// Settings that decide how a model is loaded; changing one needs a reload.
struct LoadSettings {
  int context_length = 4096;      // tokens
  int memory_budget_mib = 4096;   // weights + KV cache + scratch
  KvCacheType kv_cache_type = KvCacheType::F16;
  int threads = 0;                // 0 = one per physical core
  std::string gpu_device;         // empty = choose automatically
  int gpu_layers = -1;            // -1 = automatic, 0 = CPU only
  SpeculationSettings speculation;  // a draft model is loaded with the model

  friend bool operator==(const LoadSettings&, const LoadSettings&) = default;
};

// The local OpenAI-compatible API (Settings -> Local API). Off by default;
// loopback unless the user names another address.
struct LocalApiSettings {
  bool enabled = false;
  std::string host = "127.0.0.1";
  int port = 8080;
  int parallel = 2;          // requests decoded together (each holds its own KV slot)
  int context_length = 2048; // tokens per request slot

  friend bool operator==(const LocalApiSettings&, const LocalApiSettings&) = default;
};

// Chat with documents (the Documents panel): the embedding model that libraries
// are indexed with, and how much of the prompt retrieved sources may take.
struct DocumentsSettings {
  std::string embedding_model_path;  // empty: keyword search only
  int source_budget_tokens = 1500;   // at most a third of the context is used

  friend bool operator==(const DocumentsSettings&, const DocumentsSettings&) = default;
};

// A remote OpenAI-compatible endpoint (Settings -> Backends): vLLM,
// llama.cpp's server, Ollama, another Hearth. Its API key is never here nor in
// any file: it lives in the system's secret store under `id`
// (app/remote/key_store.h).
struct RemoteEndpointSettings {
  std::string id;        // stable and unique: names the key's secret-store entry
  std::string name;      // shown in the Backends list and the model picker
  std::string base_url;  // e.g. "https://gpu-box.example/v1"
  bool allow_lan = false;         // plain http to private addresses (docs/remote.md)
  int inactivity_timeout_s = 120; // how long the server may stay silent mid-reply

  friend bool operator==(const RemoteEndpointSettings&, const RemoteEndpointSettings&) = default;
};

// The "Auto" model (Settings -> Backends): a small and a large model, each a
// local file or a remote model ("remote:<endpoint>/<model>"). Each request goes
// to the small one unless a rule or its own scores send it to the large one
// (hearth/engine/chat/routing.h); the thresholds are the user's to tune.
struct AutoModelSettings {
  std::string small_model_path;
  std::string large_model_path;
  double min_confidence = -2.0;   // the small draft's mean log-probability, nats per token
  double min_familiarity = -5.0;  // the question's mean log-probability under the small model

  friend bool operator==(const AutoModelSettings&, const AutoModelSettings&) = default;
};

// Compare levels (the picker): the quality floor a level must meet to be
// recommended, in one of two terms. Top1: the level's most likely next token
// equals the best level's at least `top1_percent` % of the time ("answers
// agree with the best level at least 90 % of the time"). Kld: the mean KL
// divergence from the best level is at most `kld_max` nats.
enum class QualityFloorKind { Top1, Kld };

struct QualityFloorSettings {
  QualityFloorKind kind = QualityFloorKind::Top1;
  double top1_percent = 90.0;
  double kld_max = 0.05;

  friend bool operator==(const QualityFloorSettings&, const QualityFloorSettings&) = default;
};

struct Settings {
  std::string system_prompt = "You are a helpful assistant.";
  SamplingSettings sampling;
  LoadSettings load;
  OverflowPolicy overflow_policy = OverflowPolicy::Evict;
  Theme theme = Theme::System;
  int font_point_size = 11;
  // The model loaded at the last exit; reloaded at start (see load_marker.h).
  std::string last_model_path;
  std::string log_level = "info";
  LocalApiSettings local_api;
  DocumentsSettings documents;
  // Answer a repeated deterministic request (temperature 0, same model, same
  // conversation) from the response cache instead of running the model again.
  bool response_cache = false;
  std::vector<RemoteEndpointSettings> remote_endpoints;
  AutoModelSettings auto_model;
  QualityFloorSettings quality_floor;

  friend bool operator==(const Settings&, const Settings&) = default;
};

// Limits the sliders and the store clamp to; one definition for UI and storage.
struct SettingsLimits {
  static constexpr int kMinContext = 256;
  static constexpr int kMaxContext = 131072;
  static constexpr int kMinBudgetMib = 256;
  static constexpr int kMaxBudgetMib = 262144;
  static constexpr int kMinFontPoint = 8;
  static constexpr int kMaxFontPoint = 32;
  static constexpr int kMaxThreads = 256;
  static constexpr int kMaxGpuLayers = 1024;
  static constexpr int kMinPort = 1024;
  static constexpr int kMaxPort = 65535;
  static constexpr int kMaxParallel = 16;
  static constexpr int kMinApiContext = 256;
  static constexpr int kMaxApiContext = 32768;
  static constexpr int kMaxDraft = 7;  // runtime::kMaxDraftTokens
  static constexpr int kMinSourceBudget = 128;
  static constexpr int kMaxSourceBudget = 16384;
  static constexpr int kMaxRemoteEndpoints = 32;
  static constexpr int kMinRemoteTimeoutS = 5;
  static constexpr int kMaxRemoteTimeoutS = 3600;
  static constexpr size_t kMaxUrlBytes = 2048;
  static constexpr double kMinRouteScore = -20.0;  // nats per token
  static constexpr double kMaxRouteScore = 0.0;
  static constexpr double kMinTop1Floor = 50.0;
  static constexpr double kMaxTop1Floor = 100.0;
  static constexpr double kMinKldFloor = 0.0001;
  static constexpr double kMaxKldFloor = 2.0;
};

// Brings every field into its valid range (a hand-edited or old settings file
// must never make the app misbehave).
Settings clamp_settings(Settings settings);

const char* to_string(KvCacheType type);
const char* to_string(OverflowPolicy policy);
const char* to_string(Theme theme);
const char* to_string(SpeculationMode mode);  // "off", "ngram", "draft"
const char* to_string(DraftBackend backend);  // "cpu", "vulkan"
const char* to_string(QualityFloorKind kind);  // "top1", "kld"


}  // namespace hearth::settings
