#include "common/settings_store.h"

#include <QSettings>
#include <QString>

#include <string>
#include <type_traits>
#include <vector>

namespace hearth::app {

// The struct's own names read best unqualified in the one file that maps them.
using namespace hearth::settings;
namespace {

// Key names, in one table so renaming a key is a one-line change.
namespace key {
constexpr auto kSystemPrompt = "chat/system_prompt";
constexpr auto kTemperature = "sampling/temperature";
constexpr auto kTopK = "sampling/top_k";
constexpr auto kTopP = "sampling/top_p";
constexpr auto kMinP = "sampling/min_p";
constexpr auto kRepeatPenalty = "sampling/repeat_penalty";
constexpr auto kSeed = "sampling/seed";
constexpr auto kContextLength = "model/context_length";
constexpr auto kMemoryBudget = "model/memory_budget_mib";
constexpr auto kKvCacheType = "model/kv_cache_type";
constexpr auto kThreads = "model/threads";
constexpr auto kGpuDevice = "model/gpu_device";
constexpr auto kGpuLayers = "model/gpu_layers";
constexpr auto kOverflowPolicy = "chat/overflow_policy";
constexpr auto kTheme = "appearance/theme";
constexpr auto kFontPointSize = "appearance/font_point_size";
constexpr auto kLastModelPath = "model/last_model_path";
constexpr auto kLogLevel = "app/log_level";
constexpr auto kApiEnabled = "local_api/enabled";
constexpr auto kApiHost = "local_api/host";
constexpr auto kApiPort = "local_api/port";
constexpr auto kApiParallel = "local_api/parallel";
constexpr auto kApiContext = "local_api/context_length";
constexpr auto kResponseCache = "generation/response_cache";
constexpr auto kDocsEmbeddingModel = "documents/embedding_model";
constexpr auto kDocsSourceBudget = "documents/source_budget_tokens";
constexpr auto kAutoSmall = "auto_model/small";
constexpr auto kAutoLarge = "auto_model/large";
constexpr auto kAutoMinConfidence = "auto_model/min_confidence";
constexpr auto kAutoMinFamiliarity = "auto_model/min_familiarity";
constexpr auto kFloorKind = "compare/quality_floor_kind";
constexpr auto kFloorTop1 = "compare/quality_floor_top1_percent";
constexpr auto kFloorKld = "compare/quality_floor_kld";
constexpr auto kSpecMode = "speculation/mode";
constexpr auto kSpecDraftModel = "speculation/draft_model";
constexpr auto kSpecDraftMax = "speculation/draft_max";
constexpr auto kSpecDraftBackend = "speculation/draft_backend";
// An array: remote_endpoints/1/id, ... (QSettings' array form). Never a key.
constexpr auto kEndpoints = "remote_endpoints";
constexpr auto kEndpointId = "id";
constexpr auto kEndpointName = "name";
constexpr auto kEndpointUrl = "url";
constexpr auto kEndpointAllowLan = "allow_lan";
constexpr auto kEndpointTimeout = "inactivity_timeout_s";
}  // namespace key

template <typename T>
T read_number(const QSettings& store, const char* name, T fallback) {
  const QVariant value = store.value(QString::fromLatin1(name));
  if (!value.isValid()) return fallback;
  bool ok = false;
  if constexpr (std::is_floating_point_v<T>) {
    const double number = value.toDouble(&ok);
    return ok ? static_cast<T>(number) : fallback;
  } else {
    const qlonglong number = value.toLongLong(&ok);
    return ok ? static_cast<T>(number) : fallback;
  }
}

std::string read_string(const QSettings& store, const char* name, const std::string& fallback) {
  const QVariant value = store.value(QString::fromLatin1(name));
  return value.isValid() ? value.toString().toStdString() : fallback;
}

KvCacheType parse_kv(const std::string& text, KvCacheType fallback) {
  if (text == "f16") return KvCacheType::F16;
  if (text == "q8_0") return KvCacheType::Q8_0;
  return fallback;
}

OverflowPolicy parse_overflow(const std::string& text, OverflowPolicy fallback) {
  if (text == "stop") return OverflowPolicy::Stop;
  if (text == "evict") return OverflowPolicy::Evict;
  if (text == "summarize") return OverflowPolicy::Summarize;
  return fallback;
}

SpeculationMode parse_spec_mode(const std::string& text, SpeculationMode fallback) {
  for (auto m : {SpeculationMode::Off, SpeculationMode::Ngram, SpeculationMode::DraftModel}) {
    if (text == to_string(m)) return m;
  }
  return fallback;
}

DraftBackend parse_draft_backend(const std::string& text, DraftBackend fallback) {
  for (auto b : {DraftBackend::Cpu, DraftBackend::Vulkan}) {
    if (text == to_string(b)) return b;
  }
  return fallback;
}

Theme parse_theme(const std::string& text, Theme fallback) {
  if (text == "system") return Theme::System;
  if (text == "light") return Theme::Light;
  if (text == "dark") return Theme::Dark;
  return fallback;
}

void put(QSettings& store, const char* name, const QVariant& value) {
  store.setValue(QString::fromLatin1(name), value);
}

// Read through the keys QSettings' arrays are stored under
// ("remote_endpoints/size", "remote_endpoints/1/id", ...): beginReadArray
// would need a non-const store.
std::vector<RemoteEndpointSettings> read_endpoints(const QSettings& store) {
  const std::string prefix = std::string(key::kEndpoints) + "/";
  const int n = read_number(store, (prefix + "size").c_str(), 0);
  std::vector<RemoteEndpointSettings> out;
  const RemoteEndpointSettings d;
  for (int i = 1; i <= n && i <= SettingsLimits::kMaxRemoteEndpoints; ++i) {
    const std::string at = prefix + std::to_string(i) + "/";
    auto name = [&](const char* field) { return at + field; };
    RemoteEndpointSettings e;
    e.id = read_string(store, name(key::kEndpointId).c_str(), d.id);
    e.name = read_string(store, name(key::kEndpointName).c_str(), d.name);
    e.base_url = read_string(store, name(key::kEndpointUrl).c_str(), d.base_url);
    e.allow_lan = read_number(store, name(key::kEndpointAllowLan).c_str(), 0) != 0;
    e.inactivity_timeout_s = read_number(store, name(key::kEndpointTimeout).c_str(), d.inactivity_timeout_s);
    out.push_back(std::move(e));
  }
  return out;
}

void write_endpoints(QSettings& store, const std::vector<RemoteEndpointSettings>& endpoints) {
  store.remove(QString::fromLatin1(key::kEndpoints));  // fewer than before: no stale entries
  store.beginWriteArray(QString::fromLatin1(key::kEndpoints), static_cast<int>(endpoints.size()));
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const auto& e = endpoints[i];
    store.setArrayIndex(static_cast<int>(i));
    put(store, key::kEndpointId, QString::fromStdString(e.id));
    put(store, key::kEndpointName, QString::fromStdString(e.name));
    put(store, key::kEndpointUrl, QString::fromStdString(e.base_url));
    put(store, key::kEndpointAllowLan, e.allow_lan ? 1 : 0);
    put(store, key::kEndpointTimeout, e.inactivity_timeout_s);
  }
  store.endArray();
}

}  // namespace

Settings load_settings(const QSettings& store) {
  const Settings d;
  Settings s;
  s.system_prompt = read_string(store, key::kSystemPrompt, d.system_prompt);
  s.sampling.temperature = read_number(store, key::kTemperature, d.sampling.temperature);
  s.sampling.top_k = read_number(store, key::kTopK, d.sampling.top_k);
  s.sampling.top_p = read_number(store, key::kTopP, d.sampling.top_p);
  s.sampling.min_p = read_number(store, key::kMinP, d.sampling.min_p);
  s.sampling.repeat_penalty = read_number(store, key::kRepeatPenalty, d.sampling.repeat_penalty);
  s.sampling.seed = read_number(store, key::kSeed, d.sampling.seed);
  s.load.context_length = read_number(store, key::kContextLength, d.load.context_length);
  s.load.memory_budget_mib = read_number(store, key::kMemoryBudget, d.load.memory_budget_mib);
  s.load.kv_cache_type = parse_kv(read_string(store, key::kKvCacheType, ""), d.load.kv_cache_type);
  s.load.threads = read_number(store, key::kThreads, d.load.threads);
  s.load.gpu_device = read_string(store, key::kGpuDevice, d.load.gpu_device);
  s.load.gpu_layers = read_number(store, key::kGpuLayers, d.load.gpu_layers);
  s.load.speculation.mode = parse_spec_mode(read_string(store, key::kSpecMode, ""), d.load.speculation.mode);
  s.load.speculation.draft_model_path = read_string(store, key::kSpecDraftModel, d.load.speculation.draft_model_path);
  s.load.speculation.draft_max = read_number(store, key::kSpecDraftMax, d.load.speculation.draft_max);
  s.load.speculation.draft_backend =
      parse_draft_backend(read_string(store, key::kSpecDraftBackend, ""), d.load.speculation.draft_backend);
  s.overflow_policy =
      parse_overflow(read_string(store, key::kOverflowPolicy, ""), d.overflow_policy);
  s.theme = parse_theme(read_string(store, key::kTheme, ""), d.theme);
  s.font_point_size = read_number(store, key::kFontPointSize, d.font_point_size);
  s.last_model_path = read_string(store, key::kLastModelPath, d.last_model_path);
  s.log_level = read_string(store, key::kLogLevel, d.log_level);
  s.local_api.enabled = read_number(store, key::kApiEnabled, 0) != 0;
  s.local_api.host = read_string(store, key::kApiHost, d.local_api.host);
  s.local_api.port = read_number(store, key::kApiPort, d.local_api.port);
  s.local_api.parallel = read_number(store, key::kApiParallel, d.local_api.parallel);
  s.local_api.context_length = read_number(store, key::kApiContext, d.local_api.context_length);
  s.response_cache = read_number(store, key::kResponseCache, 0) != 0;
  s.documents.embedding_model_path = read_string(store, key::kDocsEmbeddingModel, d.documents.embedding_model_path);
  s.documents.source_budget_tokens =
      read_number(store, key::kDocsSourceBudget, d.documents.source_budget_tokens);
  s.quality_floor.kind = read_string(store, key::kFloorKind, "") == "kld" ? QualityFloorKind::Kld : QualityFloorKind::Top1;
  s.quality_floor.top1_percent = read_number(store, key::kFloorTop1, d.quality_floor.top1_percent);
  s.quality_floor.kld_max = read_number(store, key::kFloorKld, d.quality_floor.kld_max);
  s.remote_endpoints = read_endpoints(store);
  s.auto_model.small_model_path = read_string(store, key::kAutoSmall, d.auto_model.small_model_path);
  s.auto_model.large_model_path = read_string(store, key::kAutoLarge, d.auto_model.large_model_path);
  s.auto_model.min_confidence = read_number(store, key::kAutoMinConfidence, d.auto_model.min_confidence);
  s.auto_model.min_familiarity = read_number(store, key::kAutoMinFamiliarity, d.auto_model.min_familiarity);
  return clamp_settings(std::move(s));
}

void save_settings(QSettings& store, const Settings& settings) {
  const Settings s = clamp_settings(settings);
  put(store, key::kSystemPrompt, QString::fromStdString(s.system_prompt));
  put(store, key::kTemperature, s.sampling.temperature);
  put(store, key::kTopK, s.sampling.top_k);
  put(store, key::kTopP, s.sampling.top_p);
  put(store, key::kMinP, s.sampling.min_p);
  put(store, key::kRepeatPenalty, s.sampling.repeat_penalty);
  put(store, key::kSeed, static_cast<qlonglong>(s.sampling.seed));
  put(store, key::kContextLength, s.load.context_length);
  put(store, key::kMemoryBudget, s.load.memory_budget_mib);
  put(store, key::kKvCacheType, QString::fromLatin1(to_string(s.load.kv_cache_type)));
  put(store, key::kThreads, s.load.threads);
  put(store, key::kGpuDevice, QString::fromStdString(s.load.gpu_device));
  put(store, key::kGpuLayers, s.load.gpu_layers);
  put(store, key::kSpecMode, QString::fromLatin1(to_string(s.load.speculation.mode)));
  put(store, key::kSpecDraftModel, QString::fromStdString(s.load.speculation.draft_model_path));
  put(store, key::kSpecDraftMax, s.load.speculation.draft_max);
  put(store, key::kSpecDraftBackend, QString::fromLatin1(to_string(s.load.speculation.draft_backend)));
  put(store, key::kOverflowPolicy, QString::fromLatin1(to_string(s.overflow_policy)));
  put(store, key::kTheme, QString::fromLatin1(to_string(s.theme)));
  put(store, key::kFontPointSize, s.font_point_size);
  put(store, key::kLastModelPath, QString::fromStdString(s.last_model_path));
  put(store, key::kLogLevel, QString::fromStdString(s.log_level));
  put(store, key::kApiEnabled, s.local_api.enabled ? 1 : 0);
  put(store, key::kApiHost, QString::fromStdString(s.local_api.host));
  put(store, key::kApiPort, s.local_api.port);
  put(store, key::kApiParallel, s.local_api.parallel);
  put(store, key::kApiContext, s.local_api.context_length);
  put(store, key::kResponseCache, s.response_cache ? 1 : 0);
  put(store, key::kDocsEmbeddingModel, QString::fromStdString(s.documents.embedding_model_path));
  put(store, key::kDocsSourceBudget, s.documents.source_budget_tokens);
  put(store, key::kFloorKind, QString::fromLatin1(to_string(s.quality_floor.kind)));
  put(store, key::kFloorTop1, s.quality_floor.top1_percent);
  put(store, key::kFloorKld, s.quality_floor.kld_max);
  write_endpoints(store, s.remote_endpoints);
  put(store, key::kAutoSmall, QString::fromStdString(s.auto_model.small_model_path));
  put(store, key::kAutoLarge, QString::fromStdString(s.auto_model.large_model_path));
  put(store, key::kAutoMinConfidence, s.auto_model.min_confidence);
  put(store, key::kAutoMinFamiliarity, s.auto_model.min_familiarity);
  store.sync();
}

}  // namespace hearth::app
