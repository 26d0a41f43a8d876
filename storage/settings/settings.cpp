#include <hearth/settings/settings.h>

#include <algorithm>
#include <cmath>

namespace hearth::settings {
namespace {

double clamp_finite(double value, double lo, double hi, double fallback) {
  if (!std::isfinite(value)) return fallback;
  return std::clamp(value, lo, hi);
}

}  // namespace

Settings clamp_settings(Settings s) {
  const Settings defaults;
  using L = SettingsLimits;
  auto& sp = s.sampling;
  sp.temperature = clamp_finite(sp.temperature, 0.0, 5.0, defaults.sampling.temperature);
  sp.top_k = std::clamp(sp.top_k, 0, 1000);
  sp.top_p = clamp_finite(sp.top_p, 0.0, 1.0, defaults.sampling.top_p);
  sp.min_p = clamp_finite(sp.min_p, 0.0, 1.0, defaults.sampling.min_p);
  sp.repeat_penalty = clamp_finite(sp.repeat_penalty, 0.5, 3.0, defaults.sampling.repeat_penalty);
  if (sp.seed < -1) sp.seed = -1;

  auto& ld = s.load;
  ld.context_length = std::clamp(ld.context_length, L::kMinContext, L::kMaxContext);
  ld.memory_budget_mib = std::clamp(ld.memory_budget_mib, L::kMinBudgetMib, L::kMaxBudgetMib);
  ld.threads = std::clamp(ld.threads, 0, L::kMaxThreads);
  ld.gpu_layers = std::clamp(ld.gpu_layers, -1, L::kMaxGpuLayers);
  ld.speculation.draft_max = std::clamp(ld.speculation.draft_max, 1, L::kMaxDraft);
  s.font_point_size = std::clamp(s.font_point_size, L::kMinFontPoint, L::kMaxFontPoint);

  auto& api = s.local_api;
  api.port = std::clamp(api.port, L::kMinPort, L::kMaxPort);
  api.parallel = std::clamp(api.parallel, 1, L::kMaxParallel);
  api.context_length = std::clamp(api.context_length, L::kMinApiContext, L::kMaxApiContext);
  if (api.host.empty() || api.host.size() > 253) api.host = defaults.local_api.host;
  s.documents.source_budget_tokens =
      std::clamp(s.documents.source_budget_tokens, L::kMinSourceBudget, L::kMaxSourceBudget);

  auto& am = s.auto_model;
  am.min_confidence = clamp_finite(am.min_confidence, L::kMinRouteScore, L::kMaxRouteScore,
                                   defaults.auto_model.min_confidence);
  am.min_familiarity = clamp_finite(am.min_familiarity, L::kMinRouteScore, L::kMaxRouteScore,
                                    defaults.auto_model.min_familiarity);
  auto& qf = s.quality_floor;
  qf.top1_percent = clamp_finite(qf.top1_percent, L::kMinTop1Floor, L::kMaxTop1Floor, defaults.quality_floor.top1_percent);
  qf.kld_max = clamp_finite(qf.kld_max, L::kMinKldFloor, L::kMaxKldFloor, defaults.quality_floor.kld_max);

  // Endpoints without an id or a URL, or with an id seen before (their keys
  // would collide in the secret store), are dropped.
  std::vector<RemoteEndpointSettings> endpoints;
  for (auto& e : s.remote_endpoints) {
    if (endpoints.size() >= static_cast<size_t>(L::kMaxRemoteEndpoints)) break;
    if (e.id.empty() || e.base_url.empty() || e.base_url.size() > L::kMaxUrlBytes) continue;
    const bool seen = std::any_of(endpoints.begin(), endpoints.end(), [&](const auto& k) { return k.id == e.id; });
    if (seen) continue;
    if (e.name.empty()) e.name = e.base_url;
    e.inactivity_timeout_s = std::clamp(e.inactivity_timeout_s, L::kMinRemoteTimeoutS, L::kMaxRemoteTimeoutS);
    endpoints.push_back(std::move(e));
  }
  s.remote_endpoints = std::move(endpoints);
  return s;
}

const char* to_string(KvCacheType type) {
  switch (type) {
    case KvCacheType::F16: return "f16";
    case KvCacheType::Q8_0: return "q8_0";
  }
  return "f16";
}

const char* to_string(OverflowPolicy policy) {
  switch (policy) {
    case OverflowPolicy::Stop: return "stop";
    case OverflowPolicy::Evict: return "evict";
    case OverflowPolicy::Summarize: return "summarize";
  }
  return "evict";
}

const char* to_string(SpeculationMode mode) {
  switch (mode) {
    case SpeculationMode::Off: return "off";
    case SpeculationMode::Ngram: return "ngram";
    case SpeculationMode::DraftModel: return "draft";
  }
  return "ngram";
}

const char* to_string(DraftBackend backend) { return backend == DraftBackend::Vulkan ? "vulkan" : "cpu"; }

const char* to_string(QualityFloorKind kind) { return kind == QualityFloorKind::Kld ? "kld" : "top1"; }

const char* to_string(Theme theme) {
  switch (theme) {
    case Theme::System: return "system";
    case Theme::Light: return "light";
    case Theme::Dark: return "dark";
  }
  return "system";
}

}  // namespace hearth::settings
